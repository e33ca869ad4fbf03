#!/usr/bin/env bash
# Key material for test-secrets, made fresh at each run (never committed):
#   gen-secrets.sh DIR
# writes DIR/pos-<detector>-<what> files that hold a secret the detector
# <detector> must find, and DIR/neg-<what> files that hold none. Every key
# type ssh-keygen makes, openssl's PEM and PKCS#12 forms, a gpg secret key;
# their certificates and public halves are the negatives that look closest.
# A missing tool is an error: the test must not pass with fewer cases.
set -euo pipefail
D=${1:?usage: gen-secrets.sh DIR}
mkdir -p "$D"
cd "$D"

for tool in ssh-keygen openssl gpg; do
	command -v "$tool" >/dev/null || { echo "gen-secrets: $tool not installed" >&2; exit 1; }
done

# ssh-keygen: each type, plain and encrypted, OpenSSH and the PEM forms
for t in rsa ecdsa ed25519 dsa; do
	ssh-keygen -q -t "$t" -N '' -C test -f "k-$t" 2>/dev/null || continue
	mv "k-$t" "pos-openssh-$t"
	mv "k-$t.pub" "neg-ssh-$t.pub"
	ssh-keygen -q -t "$t" -N 'pass phrase' -C test -f "pos-openssh-$t-enc"
	rm "pos-openssh-$t-enc.pub"
done
for t in rsa ecdsa dsa; do
	ssh-keygen -q -t "$t" -m PEM -N '' -C test -f "pos-private-key-ssh-pem-$t" 2>/dev/null ||
		continue
	rm "pos-private-key-ssh-pem-$t.pub"
done
ssh-keygen -q -t rsa -m PKCS8 -N '' -C test -f pos-private-key-ssh-pkcs8
rm pos-private-key-ssh-pkcs8.pub
ssh-keygen -q -t rsa -m PEM -N 'pass phrase' -C test -f pos-private-key-ssh-pem-enc
rm pos-private-key-ssh-pem-enc.pub

# openssl: PKCS#8 of each algorithm, encrypted PKCS#8, the traditional forms
for a in RSA EC ED25519 ED448 X25519; do
	opt=()
	[ "$a" = EC ] && opt=(-pkeyopt ec_paramgen_curve:P-256)
	openssl genpkey -algorithm "$a" "${opt[@]}" -out "pos-private-key-pkcs8-$a" 2>/dev/null
	openssl pkey -in "pos-private-key-pkcs8-$a" -pubout -out "neg-pubkey-$a.pem"
done
openssl genpkey -algorithm RSA -aes-256-cbc -pass pass:secret123 \
	-out pos-private-key-pkcs8-enc 2>/dev/null
openssl rsa -in pos-private-key-pkcs8-RSA -traditional -out pos-private-key-rsa-trad 2>/dev/null
openssl rsa -in pos-private-key-pkcs8-RSA -traditional -aes128 -passout pass:secret123 \
	-out pos-private-key-rsa-trad-enc 2>/dev/null
openssl rsa -in pos-private-key-pkcs8-RSA -RSAPublicKey_out -out neg-rsa-public.pem 2>/dev/null
openssl ecparam -name prime256v1 -genkey -noout -out pos-private-key-ec-trad
openssl genpkey -genparam -algorithm DSA -pkeyopt dsa_paramgen_bits:1024 -out dsa.param \
	2>/dev/null
openssl genpkey -paramfile dsa.param -out dsa.pkcs8 2>/dev/null
openssl pkey -in dsa.pkcs8 -traditional -out pos-private-key-dsa-trad 2>/dev/null ||
	openssl dsa -in dsa.pkcs8 -out pos-private-key-dsa-trad 2>/dev/null
rm -f dsa.param dsa.pkcs8

# certificates: one, a chain of two, a request; PKCS#12 with and without
# a password; a CRL-free CA bundle
openssl req -x509 -new -key pos-private-key-pkcs8-RSA -subj /CN=ca -days 1 -out neg-cert-ca.pem
openssl req -new -key pos-private-key-pkcs8-EC -subj /CN=leaf -out neg-csr.pem
openssl x509 -req -in neg-csr.pem -CA neg-cert-ca.pem -CAkey pos-private-key-pkcs8-RSA \
	-days 1 -out leaf.pem 2>/dev/null
cat leaf.pem neg-cert-ca.pem >neg-cert-chain.pem
openssl x509 -in leaf.pem -text >neg-cert-text.pem
openssl x509 -in leaf.pem -outform DER -out neg-cert.der
openssl pkcs12 -export -inkey pos-private-key-pkcs8-EC -in leaf.pem -passout pass:secret123 \
	-out pos-pkcs12-pass.p12
openssl pkcs12 -export -inkey pos-private-key-pkcs8-EC -in leaf.pem -passout pass: \
	-out pos-pkcs12-nopass.p12
openssl pkcs12 -export -legacy -inkey pos-private-key-pkcs8-EC -in leaf.pem \
	-passout pass:x -out pos-pkcs12-legacy.p12 2>/dev/null || true
rm leaf.pem

# an RSA key inside a text that begins with something else
{
	printf 'Fixture data for the parser tests.\nrecord 1: alpha\n\n'
	cat pos-private-key-rsa-trad
	printf '\nrecord 2: beta\n'
} >pos-private-key-embedded.txt
# CRLF line ends
sed 's/$/\r/' pos-private-key-pkcs8-RSA >pos-private-key-crlf
sed 's/$/\r/' pos-openssh-ed25519 >pos-openssh-crlf

# gpg: a secret key without passphrase in a throwaway home
G=$(mktemp -d "$D/gnupg.XXXXXX")
chmod 700 "$G"
cat >"$G/params" <<EOF
%no-protection
Key-Type: EDDSA
Key-Curve: ed25519
Subkey-Type: ECDH
Subkey-Curve: cv25519
Name-Real: Test Key
Name-Email: test@example.invalid
Expire-Date: 1d
%commit
EOF
GNUPGHOME=$G gpg --batch --quiet --gen-key "$G/params" 2>/dev/null
GNUPGHOME=$G gpg --batch --quiet --armor --export-secret-keys >pos-pgp-ed25519.asc
GNUPGHOME=$G gpg --batch --quiet --armor --export >neg-pgp-public.asc
printf 'signed text\n' | GNUPGHOME=$G gpg --batch --quiet --clearsign >neg-pgp-signed.asc
GNUPGHOME=$G gpgconf --kill all 2>/dev/null || true
rm -rf "$G"

# close to a secret, but none: random data, base64 and hex of it, hashes,
# UUIDs, documentation quoting armor lines
head -c 6000 /dev/urandom >neg-random.bin
base64 neg-random.bin >neg-random.b64
base64 -w0 neg-random.bin | tr '+/' '-_' >neg-random.b64url
od -An -tx1 neg-random.bin | tr -d ' \n' >neg-random.hex
sha1sum neg-* >neg-sha1sums
sha256sum neg-* >neg-sha256sums
for _ in 1 2 3 4 5 6 7 8; do cat /proc/sys/kernel/random/uuid; done >neg-uuids
cat >neg-doc-armor.md <<'EOF'
A key file starts with `-----BEGIN RSA PRIVATE KEY-----` and ends with
`-----END RSA PRIVATE KEY-----`. An OpenSSH key says

    -----BEGIN OPENSSH PRIVATE KEY-----
    ...
    -----END OPENSSH PRIVATE KEY-----

and a PGP one `-----BEGIN PGP PRIVATE KEY BLOCK-----`. Never commit them.
EOF
cat >neg-doc-armor-c.c <<'EOF'
static const char begin[] = "-----BEGIN PRIVATE KEY-----";
static const char end[] = "-----END PRIVATE KEY-----";
/* pem_read() wants "-----BEGIN EC PRIVATE KEY-----\n" then base64 */
EOF
