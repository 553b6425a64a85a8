"""``python -m mmtasks.leaderboard build|plot|schema ...``."""

import sys

from mmtasks.leaderboard.cli import main

sys.exit(main())
