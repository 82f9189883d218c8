# @summary A real node's certname, as a twin's node is named.
#
# 1 to 250 characters of a-z, 0-9, `.`, `-` and `_`, not starting with `.` or
# `-` (the helper's rule, `clone-army schema`'s `names.twin_node`). The
# `twin` of a `clone_army_clone` takes it.
#
# @example
#   'web01.example.com'
type Clone_army::Twin_node = Pattern[/\A[a-z0-9_][a-z0-9._-]{0,249}\z/]
