/* SPDX-License-Identifier: MIT */
/*
 * What `jailfs apply` may write into SOURCE (apply-rule.h): the zone of the
 * name, and for the names the view writes only after a look at the content
 * (git's config and packed-refs, a public certificate named like a key),
 * the same look at the layer's copy.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apply-rule.h"
#include "backing.h"
#include "cleanup.h"
#include "gitswap.h"

/* Is the regular file @path below @dirfd public for a rule of @kind? */
static bool content_public(enum jf_content kind, int dirfd, const char *path)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	ssize_t n;

	fd = jf_open_file_below(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, &st);
	if (fd < 0 || st.st_nlink > 1 || (uint64_t)st.st_size > JF_CONTENT_MAX_SIZE)
		return false;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return false;
	n = pread(fd, buf, (size_t)st.st_size + 1, 0);
	return n == st.st_size && jf_content_public(kind, buf, (size_t)n);
}

bool jf_apply_allowed(const struct jf_policy *policy, const struct jf_verdict *v, int dirfd,
		      const char *path)
{
	enum jf_git_check kind = jf_rule_git_check(v->rule);
	struct jf_git_refusal out;
	struct jf_verdict pub;

	if (v->zone == JF_SAFE)
		return true;
	if (v->zone == JF_RESTRICTED && kind != JF_GIT_CHECK_NONE)
		return jf_git_state_check(kind, dirfd, path, &out) == 0;
	if (v->zone != JF_DENIED || !v->rule || v->rule->content == JF_CONTENT_NONE ||
	    !content_public(v->rule->content, dirfd, path))
		return false;
	jf_classify_public(policy, path, strlen(path), &pub);
	return pub.zone == JF_SAFE;
}
