"""How Jupyter's own tools run the notebooks: ``kernel_client``, the client that
``jupyter nbconvert --execute`` and nbgrader use (the student edition's Jupyter
configuration and the grading's name it), so that no cell waits out a timeout."""
