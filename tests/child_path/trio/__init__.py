"""Not trio: the child processes of the tests (each Wilson they start, the servers they run) find this first on
their PYTHONPATH, so they run as Wilson does where it is installed. There trio is absent: only selenium, a test
tool, brings it, and httpcore imports it whenever it is present (0.1–0.4 s a process) though nothing here runs on
trio. httpcore takes this ImportError as trio's absence, as it would in a plain installation."""

raise ImportError("trio is left out of the tests' child processes, as it is absent where Wilson is installed")
