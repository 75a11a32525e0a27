"""`ember run` puts this folder on sys.path for processes it starts with 'spawn'/'forkserver':
such a child re-imports the script, and its `import torch` lands here, which installs the
drop-in hook and hands back ember (the import statement returns sys.modules['torch'])."""

import sys

del sys.modules[__name__]
from ember.dropin import install

install()
