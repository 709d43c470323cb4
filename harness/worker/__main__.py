import sys

from harness.worker.server import main

sys.exit(main())
