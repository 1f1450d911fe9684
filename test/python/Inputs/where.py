"""Where the running Python imports the package from."""
import os

import attnc

print(os.path.realpath(attnc.__file__))
