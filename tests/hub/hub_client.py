"""The hub and its users' servers, as their REST APIs offer them.

``Hub`` speaks to JupyterHub's API with the admin token (users, servers, tokens);
``UserServer`` to one user's JupyterLab through the hub's proxy with that user's own
token: the contents API (read and save notebooks), nbgrader's Assignment List (list,
fetch, submit, fetch feedback) and a kernel's websocket (run code), the calls JupyterLab's
page makes.
"""

import json
import time
import uuid
from dataclasses import dataclass

import requests
import websocket

SERVER_TIMEOUT_S = 240
REQUEST_TIMEOUT_S = 120


@dataclass
class Hub:
    url: str
    token: str

    def api(self, method: str, path: str, **kwargs) -> requests.Response:
        answer = requests.request(method, f"{self.url}/hub/api/{path}", timeout=REQUEST_TIMEOUT_S,
                                  headers={"Authorization": f"token {self.token}"}, **kwargs)
        answer.raise_for_status()
        return answer

    def add_users(self, names: list[str]) -> None:
        """Create the users that do not exist yet."""
        existing = {user["name"] for user in self.api("GET", "users").json()}
        new = [name for name in names if name not in existing]
        if new:
            self.api("POST", "users", json={"usernames": new})

    def start(self, name: str) -> None:
        """Ask for ``name``'s server (it starts in the background)."""
        self.api("POST", f"users/{name}/server")

    def wait_ready(self, name: str) -> None:
        deadline = time.monotonic() + SERVER_TIMEOUT_S
        while time.monotonic() < deadline:
            server = self.api("GET", f"users/{name}").json()["servers"].get("", {})
            if server.get("ready"):
                return
            time.sleep(1)
        raise TimeoutError(f"the server of {name} was not ready in {SERVER_TIMEOUT_S} s")

    def server(self, name: str) -> "UserServer":
        """``name``'s server, spoken to with a new token of ``name``'s own."""
        token = self.api("POST", f"users/{name}/tokens",
                         json={"note": "course server test", "expires_in": 3600}).json()["token"]
        return UserServer(self.url, name, token)


@dataclass
class UserServer:
    hub_url: str
    name: str
    token: str

    def request(self, method: str, path: str, owner: str | None = None,
                **kwargs) -> requests.Response:
        """``path`` on ``owner``'s server (default: this user's), with this user's token;
        the answer as it comes, errors included."""
        url = f"{self.hub_url}/user/{owner or self.name}/{path}"
        return requests.request(method, url, headers={"Authorization": f"token {self.token}"},
                                allow_redirects=False, timeout=REQUEST_TIMEOUT_S, **kwargs)

    def ok(self, method: str, path: str, **kwargs) -> requests.Response:
        answer = self.request(method, path, **kwargs)
        answer.raise_for_status()
        return answer

    def read_notebook(self, path: str) -> dict:
        return self.ok("GET", f"api/contents/{path}", params={"content": 1}).json()["content"]

    def save_notebook(self, path: str, notebook: dict) -> None:
        self.ok("PUT", f"api/contents/{path}",
                json={"type": "notebook", "format": "json", "content": notebook})

    def listing(self, path: str = "") -> list[str]:
        """Names in a folder of this user's server."""
        return [item["name"] for item in self.ok("GET", f"api/contents/{path}").json()["content"]]

    def assignments(self, course_id: str) -> list[dict]:
        """The Assignment List: released, fetched and submitted assignments of the course."""
        answer = self.ok("GET", "assignments", params={"course_id": course_id}).json()
        assert answer["success"], answer["value"]
        return answer["value"]

    def act(self, action: str, course_id: str, assignment: str) -> list[dict]:
        """``fetch``, ``submit`` or ``fetch_feedback`` as the Assignment List's buttons do."""
        answer = self.ok("POST", f"assignments/{action}",
                         json={"course_id": course_id, "assignment_id": assignment}).json()
        assert answer["success"], f"{self.name} {action} {assignment}: {answer['value']}"
        return answer["value"]

    def run(self, code: str) -> str:
        """Run ``code`` in a new kernel of this server through the kernel's websocket, as a
        notebook's cell runs; what it printed. The kernel is shut down afterwards."""
        kernel = self.ok("POST", "api/kernels", json={"name": "python3"}).json()["id"]
        url = self.hub_url.replace("http", "ws", 1)
        channels = websocket.create_connection(
            f"{url}/user/{self.name}/api/kernels/{kernel}/channels",
            header=[f"Authorization: token {self.token}"], timeout=REQUEST_TIMEOUT_S)
        request = {"msg_id": uuid.uuid4().hex, "msg_type": "execute_request",
                   "session": uuid.uuid4().hex, "username": self.name, "version": "5.3"}
        try:
            channels.send(json.dumps({
                "channel": "shell", "header": request, "parent_header": {}, "metadata": {},
                "content": {"code": code, "silent": False, "store_history": False,
                            "user_expressions": {}, "allow_stdin": False}}))
            printed = []
            while True:
                message = json.loads(channels.recv())
                if message["parent_header"].get("msg_id") != request["msg_id"]:
                    continue
                content = message["content"]
                if message["msg_type"] == "stream":
                    printed.append(content["text"])
                elif message["msg_type"] == "error":
                    raise AssertionError(f"{self.name}'s kernel: {content['ename']}: "
                                         f"{content['evalue']}")
                elif content.get("execution_state") == "idle":
                    return "".join(printed)
        finally:
            channels.close()
            self.request("DELETE", f"api/kernels/{kernel}")
