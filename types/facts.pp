# @summary External facts for clones, as the helper takes them.
#
# Fact names of `a-z`, `0-9` and `_` (1 to 128 characters) to strings (at
# most 4096 characters), numbers or booleans.
#
# @example
#   { 'role' => 'web', 'tier' => 3, 'canary' => false }
type Clone_army::Facts = Hash[Pattern[/\A[a-z0-9_]{1,128}\z/], Variant[String[0, 4096], Numeric, Boolean]]
