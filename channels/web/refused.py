"""`Refused`: how any check of a dashboard request says no, with the words the user sees and the HTTP status.

Apart from channels/web/forms.py, which reads requests with Starlette: the web channel raises it too, and
imports none of the web stack until the dashboard's first connection (channels/web/channel.py).
"""


class Refused(Exception):
    def __init__(self, status: int, text: str, login: bool = False):
        super().__init__(text)
        self.status, self.text, self.login = status, text, login
