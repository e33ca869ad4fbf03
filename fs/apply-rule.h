/* SPDX-License-Identifier: MIT */
/*
 * What `jailfs apply` may write into SOURCE from a changes layer: what the
 * view would have let the agent write there. The same rule for the review
 * command and for the mounted daemon's DIR/control.
 */
#pragma once

#include <stdbool.h>

#include "policy.h"

/*
 * May the layer's file @path below @dirfd (its upper/, an fd of the
 * caller's), of verdict @v under @policy, be written into SOURCE? True for
 * SAFE; for a git config or packed-refs whose content passes the view's
 * check (jf_git_state_check()); and for a file DENIED only by a rule
 * subject to content whose content is public (jf_content_public()) and
 * which jf_classify_public() then makes SAFE. Never a git index. Reads the
 * file; thread-safe.
 */
bool jf_apply_allowed(const struct jf_policy *policy, const struct jf_verdict *v, int dirfd,
		      const char *path);
