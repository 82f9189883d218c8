# @summary The host directory masterless (`apply` mode) clones apply, or undef.
#
# An absolute path of letters, digits and `. _ - + @ /` (what the helper can
# put into the clones' `.nspawn` settings as it is), with no `..` component:
# the helper's rule (`clone-army schema`, `apply_source`), which the module's
# specs hold this alias to. It must hold `manifests/` and usually `modules/`.
# On the host the helper also checks that it exists, is reached through no
# symlink, and that it and every directory above it are root's and writable
# by no one else; it checks that again before every start of a clone.
#
# @example
#   '/srv/clone-army-apply'
type Clone_army::Apply_source = Optional[Pattern[/\A(?!.*\/\.\.(\/|\z))\/[A-Za-z0-9._+@\/-]*\z/]]
