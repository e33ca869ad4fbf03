/* SPDX-License-Identifier: MIT */
/*
 * jailfs path policy library: canonicalize untrusted path bytes, classify
 * canonical paths into zones, parse policy files, built-in profiles.
 *
 * Conventions for every function here:
 *  - Functions that can fail return 0 or a negative errno value.
 *  - A struct jf_policy is immutable once loaded; every const function may be
 *    called from any number of threads at once without locking.
 *  - Canonical paths are relative to the view's root, with no leading "./",
 *    no "//", no trailing "/". The root itself is the empty string "" (length
 *    0); printers show it as ".".
 *
 * Sources: PATH_MAX (4096) and NAME_MAX (255) from <linux/limits.h>;
 * gitignore pattern syntax from gitignore(5); threat model in
 * docs/threat-model.md.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JF_PATH_MAX 4096
#define JF_NAME_MAX 255

enum jf_zone {
	JF_SAFE = 0,	   /* read and write */
	JF_RESTRICTED = 1, /* read-only */
	JF_DENIED = 2,	   /* invisible */
};

/* "SAFE", "RESTRICTED", "DENIED". Static storage, never NULL. */
const char *jf_zone_name(enum jf_zone zone);

/* Why canonicalization refused a path. One value per refusal class. */
enum jf_refusal {
	JF_REFUSE_NONE = 0,
	JF_REFUSE_DOTDOT,	 /* a ".." component */
	JF_REFUSE_ENCODED,	 /* %2e %2f %5c (any case), or double-encoded %25xx */
	JF_REFUSE_NUL,		 /* an embedded NUL byte before the given length */
	JF_REFUSE_PATH_TOO_LONG, /* over JF_PATH_MAX bytes */
	JF_REFUSE_NAME_TOO_LONG, /* a component over JF_NAME_MAX bytes */
	JF_REFUSE_OUTSIDE_ROOT,	 /* absolute, not inside root (component-wise) */
	JF_REFUSE_CONTROL,	 /* a control or bidi character (jf_unsafe_char_len) */
	JF_REFUSE_LOOKALIKE,	 /* U+FF0E U+FF0F U+FF3C U+FE52 U+2024 U+2025 (NFKC . / \) */
	JF_REFUSE_EMPTY,	 /* zero-length input */
};

/* Machine-readable reason, e.g. "dotdot", "encoded", "nul". Static storage. */
const char *jf_refusal_reason(enum jf_refusal r);
/* Human message, e.g. "'..' component leaves the view". Static storage. */
const char *jf_refusal_message(enum jf_refusal r);

struct jf_canon {
	char path[JF_PATH_MAX + 1]; /* NUL-terminated canonical path ("" = root) */
	size_t len;		    /* strlen(path) */
	enum jf_refusal refusal;    /* JF_REFUSE_NONE on success */
};

/*
 * Canonicalize @len bytes at @in (may contain NUL bytes: they are refused,
 * not truncated). @root is the absolute source directory the view exposes
 * (no trailing slash needed); an absolute @in must lie inside it, compared
 * component by component ("/work/proj_x" is not inside "/work/proj"). A
 * relative @in is taken relative to @base, a canonical view-relative dir
 * ("" for the view root; may be NULL for root). @base is trusted (not
 * re-checked). A NULL or relative @root refuses every absolute @in.
 *
 * "." components and repeated '/' are dropped. Refusals, first match in this
 * order: empty, nul, path_too_long (@len > 4096, or @base + path > 4096),
 * encoded ('%' then any number of "25" then 2e/2f/5c, any case: "%2e",
 * "%252E"), control (0x01-0x1f, 0x7f), lookalike (UTF-8 of U+FF0E U+FF0F
 * U+FF3C U+FE52 U+2024 U+2025: they NFKC-normalize to '.', '/' or '\'),
 * dotdot, name_too_long (a component > 255 bytes), outside_root. Trailing
 * dots and spaces are accepted here; jf_classify handles them.
 *
 * Pure string work: never touches the filesystem, so symlinks are not
 * followed (callers that open things do so with openat2 RESOLVE_BENEATH).
 *
 * Returns 0 and fills @out, or -EINVAL with out->refusal set (out->path ""
 * and out->len 0). Thread-safe, reentrant, no allocation (@out is ~4 KiB).
 * Sources: docs/threat-model.md "Path tricks"; PATH_MAX/NAME_MAX <linux/limits.h>.
 */
int jf_canonicalize(const char *root, const char *base, const char *in, size_t len,
		    struct jf_canon *out);

/* Check one directory entry name (no slash) as it would be exposed in a view:
 * returns JF_REFUSE_NONE or the refusal, by the same byte rules as
 * jf_canonicalize (a name it refuses must not appear in readdir, or the view
 * would show a name that cannot be looked up). ".", ".." are
 * JF_REFUSE_DOTDOT, "" JF_REFUSE_EMPTY, a name over 255 bytes
 * JF_REFUSE_NAME_TOO_LONG, a name containing '/' JF_REFUSE_OUTSIDE_ROOT.
 * Thread-safe, no allocation. */
enum jf_refusal jf_check_name(const char *name, size_t len);

/*
 * A [denied] rule "subject to content": the name alone does not decide, a
 * regular file whose content is public (jf_content_public) is not hidden by
 * it. Only entries of the built-in profiles carry one (the table in
 * policy/profiles.c); a policy file's own lines never do, so a user's
 * "*.pem" stays strict.
 */
enum jf_content {
	JF_CONTENT_NONE = 0, /* the name decides */
	JF_CONTENT_PEM,	     /* *.pem: PEM/PGP armor of public kinds only */
	JF_CONTENT_PUBKEY,   /* *.key: PEM armor of PUBLIC KEY blocks only */
	JF_CONTENT_ASC,	     /* *.asc: public armor, or no armor at all (AsciiDoc) */
};

/* Where a rule came from. Owned by the policy; valid until jf_policy_free().
 * jailfs also makes rules of its own (line 0, e.g. source "git-index"). */
struct jf_rule {
	const char *source;	 /* file path as given, or profile name ("secrets") */
	bool builtin;		 /* true: source is a built-in profile name */
	unsigned line;		 /* 1-based line in source (for profiles, 1-based entry index) */
	const char *pattern;	 /* the pattern text as written, including "!" */
	enum jf_zone zone;	 /* section it came from */
	bool negated;		 /* "!pattern" exception in [denied] or [restricted] */
	enum jf_content content; /* a [denied] rule subject to content, or JF_CONTENT_NONE */
};

struct jf_verdict {
	enum jf_zone zone;
	const struct jf_rule *rule; /* deciding rule; NULL = the policy's default zone */
	/* The zone depends on what the object holds, not on its name alone: set
	 * by jailfs when it let a file through a rule subject to content or
	 * because git tracks it; false from jf_classify. */
	bool by_content;
};

struct jf_policy;

/*
 * Format the deciding rule as --check and audit logs print it:
 * "policy.ini:7", "profile:secrets", "default" when @rule is NULL, the
 * source alone for a rule of line 0 ("git-index").
 * Writes at most @size bytes including the NUL; returns snprintf-style length.
 * Thread-safe.
 */
int jf_rule_format(const struct jf_rule *rule, char *buf, size_t size);

/*
 * Classify canonical path @path (@len bytes, as produced by jf_canonicalize;
 * "" is the root). @is_dir says whether it names a directory: a [safe]
 * pattern or a '!' exception with a trailing '/' matches directories only,
 * while a [denied] or [restricted] one matches the name whatever object
 * holds it (a symlink ".claude" is as RESTRICTED as the directory, a file
 * "secrets" as DENIED), and a non-directory named like a directory above a
 * [restricted] rule's last name is RESTRICTED by that rule (a symlink
 * "a/.git/objects/info" for ".git/objects/info/alternates"). Semantics
 * (gitignore(5) patterns):
 *  1. a [denied] rule matching the path or any parent directory wins, unless a
 *     later "!" exception in [denied] re-allows that name; denied patterns
 *     match case-insensitively and also against the name with trailing dots
 *     and spaces stripped;
 *     an exception cannot re-include a path below an excluded directory
 *     (gitignore(5): "It is not possible to re-include a file if a parent
 *     directory of that file is excluded");
 *  2. otherwise the most specific matching [safe]/[restricted] rule decides:
 *     the deepest matched prefix (a rule matching directory "a/b" has depth
 *     2, the root rule "/" depth 0), then the longer pattern text, then the
 *     later rule (profiles come before the file's lines). A "!" exception in
 *     [restricted] sets aside the earlier [restricted] rules that match the
 *     same prefix (not [safe] ones, not those of other prefixes), so ".git"
 *     then "!.git/" restricts a non-directory named .git only. [restricted] patterns fold case and
 * trailing dots/spaces like [denied]; [safe] patterns match exactly;
 *  3. otherwise the policy's default zone (rule NULL).
 * A rule matching a directory covers everything below it. Case folding is
 * ASCII only. A policy loaded in read-only mode (jf_policy_set_read_only)
 * turns SAFE into RESTRICTED. A @path longer than JF_PATH_MAX (not
 * canonical) is DENIED with rule NULL. Never fails; thread-safe; allocates
 * nothing (uses ~17 KiB of stack); cost grows with the number of components,
 * not the number of rules.
 */
void jf_classify(const struct jf_policy *policy, const char *path, size_t len, bool is_dir,
		 struct jf_verdict *out);

/*
 * jf_classify() of a regular file whose content was found public: the
 * [denied] rules subject to content (jf_rule.content) are set aside, every
 * other rule applies as in jf_classify(). The daemon shows a file DENIED
 * only by such a rule with this verdict when jf_content_public() says so.
 * Same guarantees as jf_classify().
 */
void jf_classify_public(const struct jf_policy *policy, const char *path, size_t len,
			struct jf_verdict *out);

/*
 * The policy's [content] section: are files judged by what they hold
 * (secrets.h)? True with the selected detectors (a mask of enum
 * jf_secret_det) in *@detectors (when not NULL; 0 when off). On in every
 * policy unless "scan = off", or "profiles = -secrets" without "scan = on".
 * Thread-safe.
 */
bool jf_policy_content_scan(const struct jf_policy *policy, uint32_t *detectors);

/*
 * The [content] name override of canonical path @path (@len bytes): 1 a
 * secret whatever the detectors say (a PATTERN line), 0 never a secret by
 * content (a !PATTERN line), -1 the detectors decide. A name listed both
 * ways is a secret. Thread-safe, no allocation.
 */
int jf_policy_content_name(const struct jf_policy *policy, const char *path, size_t len);

/*
 * The zone of regular file @path (@len bytes, canonical) once its content
 * has been judged: @secret 1 when a detector flagged its first bytes, 0 when
 * none did; @buf (@blen bytes) those first bytes. The rule
 * (jailfs-policy(5), CONTENT), applied only when jf_policy_content_scan():
 *  - a [content] name override replaces @secret;
 *  - a secret is DENIED (the rule a static one whose source is "content",
 *    by_content set), unless the name alone was DENIED already (verdict kept);
 *  - not a secret keeps the name's verdict, with one exception: a file
 *    DENIED only by a built-in rule subject to content (*.pem, *.key,
 *    *.asc) gets jf_classify_public()'s zone, by_content set, when its
 *    bytes hold no NUL and no armor other than public kinds
 *    (jf_content_public), or when a !PATTERN names it.
 * Otherwise, and with scanning off, jf_classify()'s verdict. Thread-safe.
 */
void jf_classify_content(const struct jf_policy *policy, const char *path, size_t len, int secret,
			 const char *buf, size_t blen, struct jf_verdict *out);

/* The most bytes of a file jf_content_public() judges: a larger file is
 * never public. 4 MiB (a CA bundle is about 280 KB). */
#define JF_CONTENT_MAX_SIZE (4u << 20)

/*
 * Does the whole content of a file (@len bytes at @buf) let it through a
 * [denied] rule subject to content of kind @kind? True when it is empty, or
 * when it holds no NUL byte, no "PRIVATE KEY" anywhere (BEGIN PRIVATE KEY,
 * RSA/EC/DSA/OPENSSH/ENCRYPTED PRIVATE KEY, PGP PRIVATE KEY BLOCK), and:
 *  - JF_CONTENT_PEM: at least one armor block, every "-----BEGIN" of a
 *    public kind: CERTIFICATE, TRUSTED CERTIFICATE, X509 CERTIFICATE,
 *    X509 CRL, CERTIFICATE REQUEST, NEW CERTIFICATE REQUEST, PUBLIC KEY,
 *    RSA PUBLIC KEY, PGP PUBLIC KEY BLOCK, PGP SIGNATURE, PGP SIGNED MESSAGE;
 *  - JF_CONTENT_PUBKEY: at least one block, every one PUBLIC KEY or
 *    RSA PUBLIC KEY;
 *  - JF_CONTENT_ASC: every block of a public kind, or none at all.
 * Text around the blocks (comments of CA bundles, openssl's dumps) is not
 * judged. A BEGIN line cut by the end of the buffer counts as the public
 * kind it may become (a file being written). @len over JF_CONTENT_MAX_SIZE
 * and JF_CONTENT_NONE are never public. Pure, thread-safe, no allocation.
 */
bool jf_content_public(enum jf_content kind, const char *buf, size_t len);

/* Load a policy file (format: jailfs-policy(5)). A file that has no
 * "default =" and no [safe] rule is refused (-EINVAL): it would make the
 * whole project read-only, where the built-in default makes it SAFE, which
 * is never what a file written for its [run] keys means. On error returns negative
 * errno (-EINVAL for a syntax or semantic error, -ENOENT etc. from open,
 * -EISDIR, -EFBIG over 16 MiB, -ENOMEM) and writes a one-line message
 * "FILE:LINE: problem" (or "FILE: strerror") into @err (may be NULL), and
 * sets *out to NULL. On success *out is owned by the caller: free with
 * jf_policy_free(). Not async-signal-safe; safe to call from any thread. */
int jf_policy_load(const char *file, struct jf_policy **out, char *err, size_t errsz);

/* Same, from a buffer of @len bytes, without the check of "default =" (a
 * view's [run] rules are parsed back this way); @name is used in messages
 * and rules. */
int jf_policy_parse(const char *name, const char *buf, size_t len, struct jf_policy **out,
		    char *err, size_t errsz);

/* The built-in default used when no policy file is given: profiles secrets +
 * project, everything else SAFE. Built as a file holding
 * "[options]\ndefault = safe\n", so SAFE verdicts have rule NULL and print
 * as "default" (zones are the same as with "[safe]\n/\n"). Caller frees
 * with jf_policy_free(). Returns 0 or -ENOMEM. */
int jf_policy_default(struct jf_policy **out);

/* Frees everything the policy owns, rules included. NULL is a no-op. */
void jf_policy_free(struct jf_policy *policy);

/* The project's own policy file, SOURCE/JF_PROJECT_POLICY, used when no
 * --policy is given. A name of that spelling is RESTRICTED at every depth of
 * every view unless DENIED (rule "policy-file", jf_classify), so that the
 * jail never writes the policy of a later view. */
#define JF_PROJECT_POLICY ".jailfs.ini"

/* Where the policy of SOURCE comes from when no --policy is given, in this
 * order: SOURCE/JF_PROJECT_POLICY; the user's $XDG_CONFIG_HOME/jailfs/
 * policy.ini (default ~/.config/jailfs/policy.ini) unless it lies inside
 * SOURCE; else the built-in one. A file is used only when it is a regular
 * file (not a symlink) owned by the effective user and writable by nobody
 * else. Sets *@path (malloc'd; NULL for the built-in policy) and *@origin
 * ("project", "user" or "built-in", static). Returns 0, or -EPERM with a
 * message in @err (a file that exists and may not be used: never silently
 * skipped), or -ENOMEM. Reads the file system only; thread-safe. */
int jf_policy_locate(const char *source, char **path, const char **origin, char *err,
		     size_t errsize);

/* Make every non-DENIED verdict RESTRICTED (jailfs --read-only). Call before
 * sharing the policy between threads (it is a plain store). */
void jf_policy_set_read_only(struct jf_policy *policy, bool read_only);

/* Can any name be SAFE under @policy? False with jf_policy_set_read_only,
 * and when no rule is a [safe] one (but the profiles' hook samples,
 * jf_rule_git_sample()) and the default zone is not SAFE (a
 * public content, a git index or a hard link only ever lower a verdict to
 * what the other rules give): such a view can write nothing, like a
 * --read-only one. Thread-safe. */
bool jf_policy_can_write(const struct jf_policy *policy);

/* [options] default: the zone of a path no rule matches. RESTRICTED when a
 * file does not set it; SAFE for jf_policy_default(). Thread-safe. */
enum jf_zone jf_policy_default_zone(const struct jf_policy *policy);

/* [limits] <zone>.max_file_size in bytes; UINT64_MAX when unlimited or unset
 * (and for JF_DENIED). Thread-safe. */
uint64_t jf_policy_max_file_size(const struct jf_policy *policy, enum jf_zone zone);

/* [options] hardlinks = restricted (default) | zone | deny: how a regular file
 * with st_nlink > 1 is served (docs/threat-model.md, invariant 6). */
enum jf_hardlinks {
	JF_HARDLINKS_RESTRICTED = 0, /* served read-only whatever its zone */
	JF_HARDLINKS_ZONE,	     /* served by the zone of the name it was reached by */
	JF_HARDLINKS_DENY,	     /* hidden */
};
enum jf_hardlinks jf_policy_hardlinks(const struct jf_policy *policy);

/*
 * [run] section for jailrun, lists of strings; each returned array is
 * NULL-terminated, owned by the policy, valid until jf_policy_free().
 *   deny_exec  = name, name...   executables added to the built-in denylist
 *   allow_exec = name, ...       executables removed from the built-in denylist
 *   env        = NAME, NAME=VAL  variables passed or set
 *   expose     = /host/path      host paths bound read-only into the jail
 *   home       = /host/path      the jail home's directory (at most one item)
 * Keys may repeat (values append). Items are comma-separated and trimmed, so a
 * value cannot hold a comma. env names are checked ([A-Za-z_][A-Za-z0-9_]*),
 * expose and home entries must be absolute. An unset key gives an empty list; an
 * unknown key gives NULL.
 * Scalars: timeout_ms, view_idle_ms (milliseconds, 0 = unset); max_output, tmp_size, shm_size
 * (bytes, 0 = unset, UINT64_MAX = unlimited);
 * unknown key gives 0. Thread-safe.
 */
const char *const *jf_policy_run_list(const struct jf_policy *policy, const char *key);
uint64_t jf_policy_run_number(const struct jf_policy *policy, const char *key);

/*
 * The [run] section as policy file text ("[run]\n" then one "key = value"
 * line per key that is set), which jf_policy_parse() reads back to the same
 * lists and numbers. jailfs hands it to jailrun (getxattr JF_RUN_XATTR on the
 * view's root) so a view carries its [run] rules. *out is malloc'ed and
 * NUL-terminated; the caller frees it. Returns its length, or -ENOMEM.
 * Thread-safe.
 */
#define JF_RUN_XATTR "user.jailfs.run"
int jf_policy_run_format(const struct jf_policy *policy, char **out);

/* Iterate over all rules in evaluation order (for --scan and dumps): the
 * profiles (secrets first unless listed elsewhere), then the file's lines.
 * Returns NULL past the end. Thread-safe. */
const struct jf_rule *jf_policy_rule(const struct jf_policy *policy, size_t index);

/* Names of the built-in profiles: "secrets", "project", "system", "gitdir";
 * NULL-terminated, JF_PROFILE_COUNT of them. Their contents are in
 * policy/profiles.c and jailfs-policy(5), PROFILES. */
#define JF_PROFILE_COUNT 4
extern const char *const jf_profile_names[];

/* Files of a git directory that jailfs lets a checked file be renamed onto. */
enum jf_git_check {
	JF_GIT_CHECK_NONE = 0,
	JF_GIT_CHECK_INDEX,	  /* index: every entry's path one git would add */
	JF_GIT_CHECK_PACKED_REFS, /* packed-refs: no replace ref */
	JF_GIT_CHECK_CONFIG,	  /* config, .gitmodules...: no key that runs a program */
};

/*
 * Is @r (NULL: the default) a built-in profile's rule for a git index
 * (.git/index, .git/worktrees/<name>/index; index and worktrees/<name>/index
 * of the gitdir profile), packed-refs, config, config.worktree or
 * .gitmodules? Such a name is RESTRICTED, and jailfs still lets a SAFE file
 * of the same directory be renamed onto it once its content passes the
 * check of that kind (fs/gitswap.h). Returns the kind, JF_GIT_CHECK_NONE for
 * every other rule. Pure, thread-safe.
 */
enum jf_git_check jf_rule_git_check(const struct jf_rule *r);

/*
 * Is @r (NULL: the default) a built-in profile's rule for a hook sample
 * (hooks/<name>.sample of a git directory, SAFE)? The daemon creates such a
 * file, and changes its mode, without exec bits: git never runs a sample,
 * and a sample is not a hook to run by hand. Pure, thread-safe.
 */
bool jf_rule_git_sample(const struct jf_rule *r);

/*
 * Is @r, the deciding rule of a non-directory at view path @path, a
 * built-in profile's rule for a .git that is not a directory (a .git file,
 * RESTRICTED)? The daemon still lets a regular file of that name be created,
 * written and removed while what it holds is empty or a "gitdir: PATH"
 * naming a git directory of the view (fs/gitfile.h). Pure, thread-safe.
 */
bool jf_rule_gitfile(const struct jf_rule *r, const char *path);

/*
 * Does @policy zone view directory @dir ("" for the top) as a git
 * directory: its config RESTRICTED by a rule of JF_GIT_CHECK_CONFIG, its
 * hooks and the files that send git elsewhere (commondir, gitdir,
 * objects/info/alternates, config.worktree) not SAFE? Such are <x>/.git,
 * <x>/.git/modules/<name> and <x>/.git/worktrees/<name> with the built-in
 * profiles. Returns the config's rule, or NULL. Pure, thread-safe.
 */
const struct jf_rule *jf_git_dir_rule(const struct jf_policy *policy, const char *dir);
