# @summary The name of a clone or of a base image.
#
# Lower-case letters, digits and `-`, starting with a letter or digit, 1 to 64
# characters. The helper refuses anything else with `invalid-name`, and so do
# the `clone_army_clone` and `clone_army_base` types.
#
# @example
#   'clone1', 'debian-12'
type Clone_army::Name = Pattern[/\A[a-z0-9][a-z0-9-]{0,63}\z/]
