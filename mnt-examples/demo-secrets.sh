#!/usr/bin/env bash
# demo-secrets.sh DIR: plant the demo's fake secrets in DIR, a copy of
# mnt-examples/demo-project/ (demo.sh and tests/mount/test-examples.sh call it on
# each copy they make).
#
# The secrets are made here, at run time, rather than kept as files beside
# the demo: `meson install` copies demo-project/ under share/doc, and
# documentation should hold nothing that looks like a credential to a
# secret scanner (or to jailfs's own `secrets` profile). For the same
# reason the key armor and the values are put together from pieces below.
# Every value is plainly fake: each says so, and none works anywhere.
set -euo pipefail

[ $# -eq 1 ] && [ -d "$1" ] || { echo "usage: $0 DIR" >&2; exit 2; }
cd "$1"
fake=FAKE-JAILFS-DEMO
armor=PRIVATE
mkdir -p config keys .aws home/.ssh

cat >.env <<END
# FAKE secrets for the jailfs demo. Not real credentials; nothing here works.
DATABASE_URL=postgres://demo:$fake-db-password@localhost:5432/tally
API_TOKEN=$fake-api-token-0000000000
END

cat >config/.env.production <<END
# FAKE production settings for the jailfs demo. Not real credentials.
DATABASE_URL=postgres://prod:$fake-prod-password@db.invalid:5432/tally
STRIPE_SECRET=$fake-stripe-not-a-key
END

cat >keys/server.pem <<END
-----BEGIN $armor KEY-----
$fake-this-is-not-a-key-it-is-a-placeholder-for-the-demo
-----END $armor KEY-----
END

cat >.aws/credentials <<END
# FAKE AWS credentials for the jailfs demo. Not real.
[default]
aws_access_key_id = $fake-ACCESS-KEY-ID
aws_secret_access_key = $fake-secret-access-key
END

cat >home/.ssh/id_ed25519 <<END
-----BEGIN OPENSSH $armor KEY-----
$fake-not-a-real-openssh-key-only-a-placeholder-body
-----END OPENSSH $armor KEY-----
END
echo "ssh-ed25519 $fake-public-half demo@example.invalid" >home/.ssh/id_ed25519.pub
