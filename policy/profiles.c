/* SPDX-License-Identifier: MIT */
/*
 * Built-in profiles, written in policy-file syntax and loaded by the same
 * parser as a file. A rule from a profile reports as "profile:NAME"; its
 * jf_rule.line is the 1-based index of the pattern within the profile.
 *
 * Patterns that must match at any depth but contain a '/' start with "**" /
 * (a '/' in the middle of a gitignore pattern anchors it to the root).
 */
#include <stdio.h>
#include <string.h>

#include "policy-internal.h"

const char *const jf_profile_names[] = {"secrets", "project", "system", "gitdir", NULL};
_Static_assert(sizeof(jf_profile_names) / sizeof(jf_profile_names[0]) == JF_PROFILE_COUNT + 1,
	       "JF_PROFILE_COUNT counts jf_profile_names");

/* docs/threat-model.md, "Secret names the default policy hides", minus .git/config
 * and .git/hooks/ (the project profile makes those RESTRICTED). */
static const char secrets_text[] = "[denied]\n"
				   /* environment and app secrets */
				   ".env\n"
				   ".env.*\n"
				   "!.env.example\n"
				   "!.env.sample\n"
				   "!.env.template\n"
				   ".envrc\n"
				   "*.tfvars\n"
				   "*.tfstate\n"
				   "secrets/\n"
				   "credentials*.json\n"
				   "service-account*.json\n"
				   ".htpasswd\n"
				   ".pgpass\n"
				   ".my.cnf\n"
				   /* SSH and GnuPG */
				   ".ssh/\n"
				   "id_rsa*\n"
				   "id_dsa*\n"
				   "id_ecdsa*\n"
				   "id_ed25519*\n"
				   "*.ppk\n"
				   ".gnupg/\n"
				   /* keys and certificates */
				   "*.pem\n"
				   "*.key\n"
				   "*.p12\n"
				   "*.pfx\n"
				   "*.jks\n"
				   "*.keystore\n"
				   "*.kdbx\n"
				   "*.asc\n"
				   /* cloud and cluster */
				   ".aws/\n"
				   "**/.config/gcloud/\n"
				   ".azure/\n"
				   "**/.kube/config\n"
				   ".boto\n"
				   ".s3cfg\n"
				   "**/.docker/config.json\n"
				   /* package and VCS credentials */
				   ".netrc\n"
				   "_netrc\n"
				   ".npmrc\n"
				   ".pypirc\n"
				   "**/.cargo/credentials*\n"
				   "**/.gem/credentials\n"
				   ".git-credentials\n"
				   "**/.config/gh/hosts.yml\n"
				   /* shell and tool history */
				   ".*_history\n"
				   ".lesshst\n";

/*
 * Entries of a git directory that choose what git runs or where it reads
 * from, each after the prefix @P (string literal) that names the git
 * directory. hooks/ (its entries) and config run code; config.worktree is config too;
 * commondir names another directory whose config and hooks/ git then uses;
 * gitdir (in worktrees/<name>/) names the work tree's .git file, which
 * `git worktree repair` writes to; objects/info/alternates
 * makes git read objects from elsewhere. Each lets a written file choose
 * what git runs on the host (Cursor CVE-2026-26268; found again by our red
 * team through commondir).
 *
 * Then the state of an operation in progress that the host's git reads back
 * when the user goes on with it (docs/threat-model.md, "Git state files"):
 * a strategy in sequencer/opts or rebase-merge/strategy is run as the
 * program "git merge-<strategy>", a path from the work tree when it holds a
 * '/'; strategy_opts are its arguments; gpg_sign_opt makes git sign with
 * the user's key; info/grafts rewrites history; remotes/ and branches/
 * define remotes the user's push then sends the repository to. Git writes
 * these only when asked to (-s, -X, -S, options of a cherry-pick of several
 * commits), never in a plain cherry-pick, rebase, am, merge or bisect: the
 * rest of sequencer/, rebase-merge/ and rebase-apply/ stays writable.
 * branches/ itself is in git's template, so only its entries.
 *
 * index: the host's git writes wherever an index's entries say. A replace
 * ref (refs/replace/<id>, loose or in packed-refs) makes the host's git show
 * and check out another object in place of commit <id>. Git writes the
 * index and packed-refs only by renaming a .lock file onto them, which
 * jailfs lets through once it has checked the content (jf_rule_git_check()).
 * config and config.worktree likewise: a config that sets none of the keys
 * that run a program or read another file (policy/gitconfig.c) is let through.
 */
#define GIT_DIR_ENTRIES(P)                                                                         \
	P "hooks/*\n" P "config\n" P "config.worktree\n" P "commondir\n" P "gitdir\n" P            \
	  "objects/info/alternates\n" P "sequencer/opts\n" P "rebase-merge/strategy\n" P           \
	  "rebase-merge/strategy_opts\n" P "rebase-merge/gpg_sign_opt\n" P                         \
	  "rebase-apply/gpg_sign_opt\n" P "info/grafts\n" P "remotes/\n" P "branches/*\n" P        \
	  "index\n" P "packed-refs\n" P "refs/replace/\n"

/*
 * A submodule's git directory, modules/<name>/ (a name may hold '/', and
 * submodules nest: modules/a/modules/b/), is a git directory with the same
 * entries; the rest of it is written by ordinary work in the submodule
 * (commits, fetches, checkouts). "**" spans the name, so a ref of a
 * submodule named like an entry (refs/heads/config) is RESTRICTED too.
 */
#define GIT_RUNS_CODE(P)                                                                           \
	GIT_DIR_ENTRIES(P) GIT_DIR_ENTRIES(P "modules/**/") GIT_MODULE_REFS(P "modules/**/")

/*
 * ... but "**" also spans refs/ and logs/refs/ of a submodule's git
 * directory, where git clone and fetch make remotes/ (the remote-tracking
 * refs and their logs, not the legacy remotes/ that defines remotes): set
 * aside for those two, after the rule they would meet.
 */
#define GIT_MODULE_REFS(P) "!" P "refs/remotes/\n"

/*
 * What git init and git clone write in hooks/: the template's samples, which
 * git never runs (it runs hooks/<event>, and renaming a sample to that name
 * meets the [restricted] entry above). hooks/ itself is left to the default
 * zone, so a new git directory can be made; a non-directory named hooks is
 * still RESTRICTED (it lies above the entries rule), and a directory moved there
 * cannot bring a hook (a directory holding a RESTRICTED name is not moved).
 * The daemon creates a sample without its exec bits (jf_rule_git_sample()).
 */
#define GIT_SAMPLES(P) P "hooks/*.sample\n" P "modules/**/hooks/*.sample\n"
#define GIT_DIR_SAMPLES(P) GIT_SAMPLES(P) GIT_SAMPLES(P "worktrees/*/")

/*
 * A linked work tree's own git directory, worktrees/<name>/, has the same
 * entries: it holds config.worktree, commondir, gitdir and its submodules'
 * modules/, and without a commondir git takes it for a whole repository,
 * config and hooks/ included. What git writes there in everyday work
 * (HEAD, ORIG_HEAD, logs/, refs/, locks) is left writable, and its index is
 * replaced by the checked rename, as above.
 */
#define GIT_DIR_RUNS_CODE(P) GIT_RUNS_CODE(P) GIT_RUNS_CODE(P "worktrees/*/")

/*
 * A .git that is not a directory: a file "gitdir: PATH" (a linked work
 * tree's, a submodule's) sends git to PATH for its config and hooks/, and a
 * symlink does the same without the file; either, planted next to a
 * directory the agent wrote, makes the host's git run what that directory
 * says. Existing ones stay readable (git in the view needs them); a .git
 * directory keeps the zone of its parent, the exception setting aside the
 * rule before it. The daemon still lets a regular .git be created, written
 * and removed while it holds nothing or names a git directory
 * (jf_rule_gitfile(), fs/gitfile.h): git submodule add writes one in place.
 */
#define GIT_FILE ".git\n!.git/\n"

/*
 * Files that make a host program run code or auto-approve commands: git
 * (above), editors and agents: settings that auto-approve commands (Copilot
 * CVE-2025-53773, Claude Code CVE-2026-25725) and hook managers.
 */
static const char project_text[] = "[safe]\n" GIT_DIR_SAMPLES(
	"**/.git/") "[restricted]\n" GIT_DIR_RUNS_CODE("**/.git/") ".gitmodules\n"
								   ".vscode/\n"
								   ".idea/\n"
								   ".claude/\n"
								   ".claude.json\n"
								   ".cursor/\n"
								   ".gemini/\n"
								   ".codex/\n"
								   ".windsurf/\n"
								   ".zed/\n"
								   ".continue/\n"
								   ".mcp.json\n"
								   ".envrc\n"
								   ".devcontainer/\n"
								   ".husky/\n"
								   ".pre-commit-config.yaml\n"
								   ".yarnrc.yml\n" GIT_FILE;

/* The main repository's git directory itself, shown to a linked work tree's
 * jail (jailrun): the same git entries, from its root, and .git files at
 * any depth (git run in the git directory looks for a .git there first). */
static const char gitdir_text[] =
	"[safe]\n" GIT_DIR_SAMPLES("/") "[restricted]\n" GIT_DIR_RUNS_CODE("/") GIT_FILE;

/* For a view of the whole host ("/"). /etc keeps what programs need to run;
 * the entries of /etc are denied, not /etc itself, so exceptions can re-include them. */
static const char system_text[] = "[restricted]\n"
				  "/\n"
				  "/usr/\n"
				  "/bin\n"
				  "/sbin\n"
				  "/lib*\n"
				  "/opt/\n"
				  "/home/\n"
				  "/var/log/\n"
				  "[denied]\n"
				  "/etc/*\n"
				  "!/etc/passwd\n"
				  "!/etc/group\n"
				  "!/etc/nsswitch.conf\n"
				  "!/etc/hosts\n"
				  "!/etc/resolv.conf\n"
				  "!/etc/ld.so.cache\n"
				  "!/etc/ld.so.conf*\n"
				  "!/etc/ssl/\n"
				  "!/etc/ca-certificates*\n"
				  "!/etc/alternatives/\n"
				  "!/etc/localtime\n"
				  "/etc/ssl/private/\n"
				  "/proc\n"
				  "/sys\n"
				  "/dev\n"
				  "/boot\n"
				  "/root\n"
				  "/run\n"
				  "/var/*\n"
				  "!/var/log/\n";

/*
 * The profile entries subject to content (jf_content_public): a certificate,
 * a public key or an AsciiDoc file is not a secret, and hiding pip's CA
 * bundle (certifi/cacert.pem) breaks "python3 -m venv". Binary containers
 * (*.p12, *.pfx, *.jks, *.keystore, *.kdbx, *.ppk) stay hidden whatever
 * they hold: their content cannot be judged without their passwords.
 */
static const struct {
	const char *profile, *pattern;
	enum jf_content kind;
} content_rules[] = {
	{"secrets", "*.pem", JF_CONTENT_PEM},
	{"secrets", "*.key", JF_CONTENT_PUBKEY},
	{"secrets", "*.asc", JF_CONTENT_ASC},
};

enum jf_content jf_profile_content(const char *profile, const char *pattern)
{
	for (size_t i = 0; i < sizeof(content_rules) / sizeof(content_rules[0]); i++)
		if (strcmp(profile, content_rules[i].profile) == 0 &&
		    strcmp(pattern, content_rules[i].pattern) == 0)
			return content_rules[i].kind;
	return JF_CONTENT_NONE;
}

/* Does @pattern end with the path component @name? */
static bool ends_with_name(const char *pattern, const char *name)
{
	size_t n = strlen(pattern), m = strlen(name);

	return n > m && pattern[n - m - 1] == '/' && strcmp(pattern + n - m, name) == 0;
}

enum jf_git_check jf_rule_git_check(const struct jf_rule *r)
{
	if (!r || !r->builtin || r->negated || r->zone != JF_RESTRICTED ||
	    (strcmp(r->source, "project") != 0 && strcmp(r->source, "gitdir") != 0))
		return JF_GIT_CHECK_NONE;
	if (ends_with_name(r->pattern, "index"))
		return JF_GIT_CHECK_INDEX;
	if (ends_with_name(r->pattern, "packed-refs"))
		return JF_GIT_CHECK_PACKED_REFS;
	/* .gitmodules is in git's config syntax too, and git submodule add
	 * replaces it by renaming .gitmodules.lock onto it; its keys that run
	 * a program (submodule.<name>.update = !command, an ext:: URL) are
	 * on the validator's list. */
	if (ends_with_name(r->pattern, "config") || ends_with_name(r->pattern, "config.worktree") ||
	    strcmp(r->pattern, ".gitmodules") == 0)
		return JF_GIT_CHECK_CONFIG;
	return JF_GIT_CHECK_NONE;
}

bool jf_rule_git_sample(const struct jf_rule *r)
{
	size_t n = r ? strlen(r->pattern) : 0;

	return r && r->builtin && !r->negated && r->zone == JF_SAFE &&
	       (strcmp(r->source, "project") == 0 || strcmp(r->source, "gitdir") == 0) && n >= 15 &&
	       strcmp(r->pattern + n - 15, "/hooks/*.sample") == 0;
}

/* The deciding rule of a non-directory .git is GIT_FILE's, or the first
 * entry rule of a git directory below it (a non-directory above a rule's
 * directory is RESTRICTED by that rule): any of the profiles', with the name. */
bool jf_rule_gitfile(const struct jf_rule *r, const char *path)
{
	const char *slash = strrchr(path, '/');

	return r && r->builtin && !r->negated && r->zone == JF_RESTRICTED &&
	       (strcmp(r->source, "project") == 0 || strcmp(r->source, "gitdir") == 0) &&
	       strcmp(slash ? slash + 1 : path, ".git") == 0;
}

/* Entries that, when not SAFE, show a directory zoned as a git directory: its
 * config (replaced through the validator), a hook and the files that send git
 * elsewhere (GIT_DIR_ENTRIES). */
static const char *const git_dir_probes[] = {"hooks/pre-commit", "config.worktree", "commondir",
					     "gitdir", "objects/info/alternates"};

const struct jf_rule *jf_git_dir_rule(const struct jf_policy *policy, const char *dir)
{
	char path[JF_PATH_MAX + 1];
	struct jf_verdict v;
	const struct jf_rule *config;
	int n = snprintf(path, sizeof(path), "%s%sconfig", dir, *dir ? "/" : "");

	if (n < 0 || (size_t)n >= sizeof(path))
		return NULL;
	jf_classify(policy, path, (size_t)n, false, &v);
	if (v.zone != JF_RESTRICTED || jf_rule_git_check(v.rule) != JF_GIT_CHECK_CONFIG)
		return NULL;
	config = v.rule;
	for (size_t i = 0; i < sizeof(git_dir_probes) / sizeof(git_dir_probes[0]); i++) {
		n = snprintf(path, sizeof(path), "%s%s%s", dir, *dir ? "/" : "", git_dir_probes[i]);
		if (n < 0 || (size_t)n >= sizeof(path))
			return NULL;
		jf_classify(policy, path, (size_t)n, false, &v);
		if (v.zone == JF_SAFE)
			return NULL;
	}
	return config;
}

const char *jf_profile_text(const char *name)
{
	if (strcmp(name, "secrets") == 0)
		return secrets_text;
	if (strcmp(name, "project") == 0)
		return project_text;
	if (strcmp(name, "system") == 0)
		return system_text;
	if (strcmp(name, "gitdir") == 0)
		return gitdir_text;
	return NULL;
}
