import sys

from mmtasks.cli import main

sys.exit(main())
