import sys

from tests.support.containers.runner import main

raise SystemExit(main(sys.argv[1:]))
