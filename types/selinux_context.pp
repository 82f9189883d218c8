# @summary An SELinux security context, `user:role:type[:level]`.
#
# Letters, digits and `_` in the user, role and type; the optional MLS/MCS
# level also `.`, `,`, `-` and `:` (`s0`, `s0:c1,c2`, `s0-s0:c0.c1023`). No
# spaces, quotes or `$`, so a value can never add an argument to the clones'
# `systemd-nspawn` command line. The helper (`clone-army host selinux`)
# refuses anything else the same way (`invalid-argument`).
#
# @example
#   'system_u:system_r:container_t:s0'
type Clone_army::Selinux_context = Pattern[/\A[A-Za-z0-9_]+:[A-Za-z0-9_]+:[A-Za-z0-9_]+(:[A-Za-z0-9_.,:-]+)?\z/]
