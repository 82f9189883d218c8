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
}
