/* SPDX-License-Identifier: MIT */
/* The jail's home directory and the toolchains exposed in it (home.c). */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct jf_policy;

#define JR_HOME_EXPOSE 64 /* exposed directories: toolchains and [run] expose */
#define JR_HOME_MASKS 64  /* DENIED entries masked in them */
#define JR_HOME_ENV 2	  /* environment defaults for the toolchains */

/* An entry of an exposed directory the jail shows empty (DENIED). */
struct jr_mask {
	char path[PATH_MAX]; /* absolute, the same in the jail and on the host */
	bool is_dir;
};

struct jr_home {
	char user[PATH_MAX]; /* the user's home on the host (canonical) */
	char jail[PATH_MAX]; /* HOME in the jail: @user, or /tmp/home where @user cannot be */
	/* the directory on the host bound at @jail (canonical); "" when the
	 * default place could not be made: @jail is then the jail's own /tmp/home */
	char host[PATH_MAX];
	/* what the jail binds read-only at the same path: the toolchains that
	 * exist, then [run] expose; NULL-terminated, malloc'ed strings */
	char *expose[JR_HOME_EXPOSE + 1];
	int nexpose;
	struct jr_mask masks[JR_HOME_MASKS];
	int nmasks;
	/* NAME=VALUE defaults the exposed toolchains need (Go's module cache
	 * when ~/go/pkg/mod is exposed), malloc'ed; NULL-terminated, the
	 * command line and [run] env override them */
	char *env[JR_HOME_ENV + 1];
};

/*
 * Choose and make the jail home of @project (absolute, canonical): @dir
 * (--home or [run] home) or the default, $XDG_STATE_HOME/jailrun/homes/
 * NAME-HASH (~/.local/state/... without it; NAME the project's last
 * component, HASH of its path). Created with mode 0700 where missing; it
 * must be a directory of the caller's uid, not a symlink, and lie neither
 * inside nor around @project or @mnt (the view's mountpoint, or NULL); its
 * mode is set to 0700. Fills h->user, h->jail, h->host. Returns 0, or
 * -EINVAL with a message in @err. When the default place fails, says so on
 * stderr and returns 0 with h->host "" (a home emptied after the command).
 * Not thread-safe (getpwuid).
 */
int jr_home_setup(struct jr_home *h, const char *project, const char *mnt, const char *dir,
		  char *err, size_t errsz);

/*
 * Fill h->expose with the user's toolchain directories that exist
 * (~/.rustup ~/.cargo/bin ~/.pyenv ~/.nvm ~/.local/bin ~/go/pkg/mod) and
 * then @extra
 * ([run] expose; NULL-terminated, or NULL), leaving out each that the
 * secrets profile or @policy (or NULL) makes DENIED, and h->masks with the
 * DENIED entries found in the two levels below each (more than
 * JR_HOME_MASKS: that directory is left out). Says what it leaves out on
 * stderr. With ~/go/pkg/mod exposed, h->env gets GOMODCACHE (the jail
 * home's .cache/go-mod) and GOPROXY (the host's cache through file://,
 * then the default proxy). Returns 0 or -ENOMEM. Free with
 * jr_home_release().
 */
int jr_home_expose(struct jr_home *h, const struct jf_policy *policy, const char *const *extra);

/* Free what jr_home_expose() allocated. Idempotent. */
void jr_home_release(struct jr_home *h);

/*
 * A command @name (no '/') the jail does not have: is it in a directory of
 * @host_path (jailrun's own PATH, ':'-separated; relative entries are
 * skipped) as an executable? Writes that directory to @dir (@size bytes).
 * Returns 0, or -ENOENT.
 */
int jr_home_missing(const char *name, const char *host_path, char *dir, size_t size);
