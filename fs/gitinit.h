/* SPDX-License-Identifier: MIT */
/*
 * A refused step of git init or git clone leaves nothing behind. Both make
 * the new git directory, copy the template into it, and only then write
 * HEAD and config; a template holding a hook (--template=DIR,
 * init.templateDir, GIT_TEMPLATE_DIR) meets a RESTRICTED name
 * (hooks/<event>) and git init dies, leaving a .git without HEAD, which no
 * git takes for a repository and which the agent cannot remove (the
 * RESTRICTED names in it). The daemon removes such a git directory at the
 * refusal: one this mount made (newdirs.h), still without HEAD, holding
 * only directories this mount made and names the view does not hide.
 *
 * Conventions: no return value (best effort: a directory that does not
 * qualify is left as it is); thread-safe.
 */
#pragma once

/* The most entries the removal looks at, the walk's depth. */
#define JF_GITINIT_MAX_ENTRIES 20000
#define JF_GITINIT_MAX_DEPTH 32

/*
 * The view refused making @path (a view path) RESTRICTED: when it is a
 * hook (<dir>/hooks/<name>) of a git directory that qualifies (above),
 * remove that directory and all it holds. Caller holds
 * jf_fs.ns_lock (shared is enough: the directory renames that could bring
 * a hidden object into it take it exclusive).
 */
void jf_gitinit_refused(const char *path);
