"""`python -m wilson.cli`: what service units installed before the layers moved still start.

New units (`wilson service install`) start `python -m wilson.app.cli`; this keeps an older one working
after an upgrade instead of failing to find its module.
"""

import sys

from wilson.app.cli import main

if __name__ == "__main__":
    sys.exit(main())
