# @summary Installs the `clone-army` helper that the types' providers run.
#
# @api private
#
# The binary comes from the module's `files/clone-army` (put there by
# `make build`: a statically linked build that runs on every supported host).
#
class clone_army::install {
  file { $clone_army::helper_path:
    ensure => file,
    source => 'puppet:///modules/clone_army/clone-army',
    owner  => 'root',
    group  => 'root',
    mode   => '0755',
  }

  # The helper's own man page and bash and zsh completions under /usr/local,
  # made from its command line. `--check` compares them with what the
  # installed helper makes: a new helper refreshes them, a failed run is
  # retried at the next. `test -x` first: in a --noop run before the helper
  # exists the check must say "not in place" (pending), not fail as a missing
  # command would, and with it the fleet that comes after the install.
  $helper = shellquote($clone_army::helper_path)
  exec { 'clone_army::install docs':
    command  => "${helper} host docs",
    unless   => "test -x ${helper} && ${helper} host docs --check",
    provider => shell,
    require  => File[$clone_army::helper_path],
  }
}
