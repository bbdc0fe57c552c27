"""``python -m grader.remote serve RFD WFD``: the student server, on the pipes it was given (`grader.remote.server`)."""

import sys

from grader.remote.server import serve

if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "serve":
        serve(int(sys.argv[2]), int(sys.argv[3]))
    else:
        sys.exit("usage: python -m grader.remote serve RFD WFD")
