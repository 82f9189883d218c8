# @summary The host directory masterless (`apply` mode) clones apply, or undef.
#
# An absolute path of letters, digits and `. _ - + @ /` (what the helper can
# put on the clones' `systemd-nspawn --bind-ro=` command line as it is). It
# must hold `manifests/` and usually `modules/`; the helper checks that it
# exists. No `..` components.
#
# @example
#   '/srv/clone-army-apply'
type Clone_army::Apply_source = Optional[Pattern[/\A(?!.*\/\.\.(\/|\z))\/[A-Za-z0-9._+@\/-]*\z/]]
