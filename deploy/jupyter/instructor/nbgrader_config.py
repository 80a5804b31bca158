"""nbgrader in an instructor's server: Formgrader works on the course cloned in COURSE_DIR.

Formgrader starts in the server's folder, the home folder, where no nbgrader_config.py is.
This file loads the course's own, grading/nbgrader_config.py of the clone in COURSE_DIR
(default ~/embeddings-workbook): the course id, its folders, the time limit per cell. The
exchange (ngshare) comes from /etc/jupyter/nbgrader_config.py, loaded before this file.
Nothing happens while the clone is missing.
"""

import os

c = get_config()  # noqa: F821  (provided by nbgrader when it loads this file)

course = os.path.expanduser(os.environ.get("COURSE_DIR", "~/embeddings-workbook"))
load_subconfig(os.path.join(course, "grading", "nbgrader_config.py"))  # noqa: F821
