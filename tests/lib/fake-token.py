#!/usr/bin/env python3
# fake-token.py [PREFIX]: a GitHub (ghp_, gho_, ...) or npm (npm_) style
# token made up here, its CRC-32 checksum valid, so the secret detectors
# take it for one; it grants nothing anywhere. Default prefix ghp_.
import random
import string
import sys
import zlib

ALPHABET = string.digits + string.ascii_uppercase + string.ascii_lowercase
rnd = random.SystemRandom()
entropy = "".join(rnd.choice(ALPHABET) for _ in range(30))
crc, digits = zlib.crc32(entropy.encode()), ""
for _ in range(6):
    digits, crc = ALPHABET[crc % 62] + digits, crc // 62
print((sys.argv[1] if len(sys.argv) > 1 else "ghp_") + entropy + digits)
