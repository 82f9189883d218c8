# @summary Declares the base image and the clones `clone1` .. `cloneN`.
#
# @api private
#
# @param master
#   The Puppet Server every clone points at (already resolved by the class).
# @param num_clones
#   How many clones to declare (already resolved by the class).
#
class clone_army::fleet (
  Clone_army::Hostname $master,
  Integer[0] $num_clones,
) {
  $base = $clone_army::base
  $helper = $clone_army::helper_path

  clone_army_base { $base:
    ensure => present,
    helper => $helper,
  }

  # Integer[1, N] iterates 1..N; with N = 0 there is nothing to iterate.
  if $num_clones > 0 {
    Integer[1, $num_clones].each |Integer $index| {
      $clone = "clone${index}"
      clone_army_clone { $clone:
        ensure   => $clone_army::clone_ensure,
        base     => $base,
        master   => $master,
        certname => "${clone}.${trusted['certname']}",
        helper   => $helper,
      }
    }
  }
}
