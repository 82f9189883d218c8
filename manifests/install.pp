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
  # retried at the next. Through the shell, so that a --noop run before the
  # helper exists shows this as pending instead of failing (and with it the
  # fleet that comes after the install).
  $docs = shellquote($clone_army::helper_path, 'host', 'docs')
  exec { 'clone_army::install docs':
    command  => $docs,
    unless   => "${docs} --check",
    provider => shell,
    require  => File[$clone_army::helper_path],
  }
}
