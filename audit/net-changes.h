/* SPDX-License-Identifier: MIT */
/*
 * Net changes from an audit log (net-changes.c): what a run left changed,
 * by final path, out of the allowed records in the order the log holds
 * them. Renames and unlinks are followed, so a temporary file renamed over
 * X reads as X changed, and a file created and then removed is not listed.
 * Used by jailfs --audit-report and by jailrun's --json result.
 *
 * What the records say, and what they do not (docs/audit.md): a "create"
 * reaches the daemon only for a name the kernel found absent, so it makes a
 * new file; an open, a read, a lookup or any mutation of a name the log had
 * not seen says that the name existed before. A rename over a name the log
 * had not seen does not say whether that name existed: the result is then
 * JF_NET_WRITTEN, not a guess. Needs the allowed mutations: audit level
 * writes or all.
 *
 * Not thread-safe; no global state. Paths are the records' "path" fields.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

enum jf_net_kind {
	JF_NET_CREATED,	 /* absent before, there now */
	JF_NET_MODIFIED, /* there before, content or attributes changed, or replaced */
	JF_NET_DELETED,	 /* there before, gone (a directory's deleted entries fold into it) */
	JF_NET_RENAMED,	 /* moved from @from; @modified if also changed */
	JF_NET_WRITTEN,	 /* put in place by a rename over a name whose past the log lacks */
};

struct jf_net_change {
	enum jf_net_kind kind;
	const char *path; /* the final path (for deleted: the path it had) */
	const char *from; /* JF_NET_RENAMED: the path it came from, else NULL */
	bool modified;	  /* JF_NET_RENAMED: written as well */
};

struct jf_net_changes;

/* A new, empty tracker in *@ret (free with jf_net_free). 0 or -ENOMEM. */
int jf_net_new(struct jf_net_changes **ret);
void jf_net_free(struct jf_net_changes *n);

/*
 * Account one record (a jansson object as jf_audit_read gives it; the
 * caller keeps it). Records whose decision is not "allow" change nothing;
 * "dropped", "capped" and "suppressed" records with allowed records in them
 * make the result incomplete. 0 or -ENOMEM.
 */
int jf_net_add(struct jf_net_changes *n, json_t *rec);

/*
 * The net changes, sorted by path, in *@ret (*@count entries; owned by @n,
 * valid until the next jf_net_add or jf_net_free). 0 or -ENOMEM.
 */
int jf_net_list(struct jf_net_changes *n, const struct jf_net_change **ret, size_t *count);

/* Why the list may miss changes (a static sentence), or NULL. */
const char *jf_net_incomplete(const struct jf_net_changes *n);

/* How many allowed records were accounted: 0 after a log at level denied,
 * which records no allowed change at all. */
size_t jf_net_allowed(const struct jf_net_changes *n);

/* "created", "modified", "deleted", "renamed", "written" (static). */
const char *jf_net_kind_name(enum jf_net_kind k);

/* The changes as a JSON array of {"change","path"[,"from","modified"]}
 * objects, at most @max of them (0: all; *@omitted gets the rest's count,
 * may be NULL). New reference, or NULL on ENOMEM. */
json_t *jf_net_json(struct jf_net_changes *n, size_t max, size_t *omitted);
