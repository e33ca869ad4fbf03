/* SPDX-License-Identifier: MIT */
/*
 * The zone of a view path by its name: the policy (jf_fs.policy) applied to
 * paths of the view, and the one place that says which view path is the
 * jailfs mountpoint inside SOURCE.
 */
#include <string.h>

#include "fsstate.h"
#include "policy.h"
#include "systarget.h"
#include "zone-name.h"

void jf_classify_path(const char *path, size_t len, bool is_dir, struct jf_verdict *v)
{
	jf_classify(jf_fs.policy, path, len, is_dir, v);
}

bool jf_is_mnt_path(const char *path)
{
	return jf_fs.mnt_rel && strcmp(path, jf_fs.mnt_rel) == 0;
}

struct jf_symlink_ctx jf_view_symlink_ctx(void)
{
	return (struct jf_symlink_ctx){
		.source_abs = jf_fs.source_abs,
		.mnt_rel = jf_fs.mnt_rel,
		.policy = jf_fs.policy,
		.host_check = jf_systarget_check,
		.host_root_fd = jf_fs.host_root_fd,
	};
}
