/* SPDX-License-Identifier: MIT */
/*
 * The zone of a view path by its name: the view's policy applied to paths
 * of the view, and the one place that says which view path is the jailfs
 * mountpoint inside SOURCE.
 */
#include <string.h>

#include "policy.h"
#include "zone-name.h"

void jf_classify_path(const struct jf_view *view, const char *path, size_t len, bool is_dir,
		      struct jf_verdict *v)
{
	jf_classify(view->policy, path, len, is_dir, v);
}

bool jf_is_mnt_path(const struct jf_view *view, const char *path)
{
	return view->mnt_rel && strcmp(path, view->mnt_rel) == 0;
}

struct jf_symlink_ctx jf_view_symlink_ctx(const struct jf_view *view)
{
	return (struct jf_symlink_ctx){
		.source_abs = view->source_abs,
		.mnt_rel = view->mnt_rel,
		.policy = view->policy,
		.host_check = view->host_check,
		.host_root_fd = view->host_root_fd,
	};
}
