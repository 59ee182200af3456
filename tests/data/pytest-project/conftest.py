# Lets tests import the sample module `billing` from this directory.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
