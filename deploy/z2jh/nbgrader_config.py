"""nbgrader in the course's JupyterHub on Kubernetes: the exchange is the ngshare service.

The image installs this file as /etc/jupyter/nbgrader_config.py (deploy/Dockerfile). In a
user's server the hub sets NGSHARE_URL (deploy/z2jh/config.yaml, singleuser.extraEnv), and
nbgrader's release, fetch, submit, collect and feedback go to ngshare instead of a folder
shared by every user. Without NGSHARE_URL (the image run on its own) nbgrader keeps its own
exchange, and Validate works as on a laptop.

Students see every course ngshare enrolls them in (course id "*"). An instructor's
Formgrader works on one course, named in the course's grading/nbgrader_config.py, which
deploy/jupyter/instructor/nbgrader_config.py loads after this file.
"""

import os

c = get_config()  # noqa: F821  (provided by nbgrader when it loads this file)

ngshare_url = os.environ.get("NGSHARE_URL")
if ngshare_url:
    # Installed in the image only, and importable only in a hub's server (JUPYTERHUB_USER).
    from ngshare_exchange import configureExchange

    configureExchange(c, ngshare_url)
    c.CourseDirectory.course_id = "*"
