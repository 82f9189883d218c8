# @summary Turns this host into a fleet of puppet-agent clones that put load on a Puppet Server.
#
# Each clone is a `systemd-nspawn` container booted from a shared base image
# (`/var/lib/puppet-clone-army/<base>`) through an OverlayFS mount at
# `/var/lib/machines/<clone>`, with its own upper layer at
# `/var/lib/puppet-clone-army/<clone>-overlay`, run by the unit
# `puppet-clone-army@<clone>.service`. All clones hang off
# `puppet-clone-army.target`.
#
# The class installs the `clone-army` helper, declares one `clone_army_base`
# and the clones `clone1` .. `clone<num_clones>` as `clone_army_clone`
# resources. Each clone's certname (and hostname) is
# `<clone>.<certname of this host>`, so one class on many load hosts gives
# unique certnames.
#
# @example Classified through a Puppet Server (the master is the server that compiled the catalog)
#   include clone_army
#
# @example With Bolt or `puppet apply` (no Puppet Server facts: `master` is required)
#   class { 'clone_army':
#     master     => 'puppet.example.com',
#     num_clones => 20,
#   }
#
# @example Keep the whole fleet stopped, e.g. while editing the base image
#   class { 'clone_army':
#     master       => 'puppet.example.com',
#     clone_ensure => 'stopped',
#   }
#
# @param master
#   The Puppet Server the clones run their agents against (`server` in each
#   clone's `puppet.conf`). When undef, the server that compiled this catalog
#   (`$server_facts['servername']`) is used; that only exists when the catalog
#   comes from a Puppet Server, so with `puppet apply` or `bolt apply` the
#   parameter must be given. Changing it re-points every existing clone
#   without rebuilding anything. With several compilers behind a load
#   balancer, give the load balancer's name here: otherwise the clones follow
#   whichever compiler compiled the last catalog.
#
# @param num_clones
#   How many clones (`clone1` .. `cloneN`) to run. 0 is a valid count. When
#   undef it is computed from the host's memory: the total RAM
#   (`$facts['memory']['system']['total_bytes']`) minus a reserve of 2 GiB for
#   the OS and the host's own agent, divided by 150 MiB per clone running the
#   agent as a daemon, rounded down, and never below 0:
#   `max(0, floor((total_bytes - 2 GiB) / 150 MiB))`. A 24 GiB host gets 147
#   clones; a 2 GiB host gets none. Clones beyond `num_clones` are not
#   removed by the class; remove them with
#   `puppet resource clone_army_clone cloneN ensure=absent`.
#
# @param clone_ensure
#   The state every clone is kept in: `present` (exists; a new clone is
#   started once, after that its run state is left alone so a host agent run
#   never stops an experiment), `running` or `stopped`.
#
# @param base
#   The name of the base image the clones boot from. Defaults to the host's
#   OS name and major release, lower-cased, with anything outside
#   `[a-z0-9-]` turned into `-`: `debian-12`, `ubuntu-22-04`. The helper
#   builds it with the host's OS and release. Changing it recreates every
#   clone on the new base (their upper layers are discarded).
#
# @param helper_path
#   Where the `clone-army` helper binary is installed. The types' providers
#   run it from there.
#
class clone_army (
  Optional[Clone_army::Hostname] $master = undef,
  Optional[Integer[0]] $num_clones = undef,
  Clone_army::Clone_ensure $clone_ensure = 'present',
  Clone_army::Name $base = regsubst(downcase("${facts['os']['name']}-${facts['os']['release']['major']}"), '[^a-z0-9-]', '-', 'G'),
  Clone_army::Absolutepath $helper_path = '/usr/local/sbin/clone-army',
) {
  # Only a catalog compiled by a Puppet Server for a remote agent has a server
  # to point the clones at; `puppet apply` and Bolt compile locally and have
  # no `servername` (getvar keeps this safe under strict variables).
  $compiling_server = $trusted['authenticated'] ? {
    'remote' => getvar('server_facts.servername'),
    default  => undef,
  }

  $_master = $master ? {
    undef   => $compiling_server,
    default => $master,
  }
  if $_master =~ Undef {
    fail(@("MSG"/L))
      clone_army: no Puppet Server to point the clones at. This catalog was not \
      compiled by a Puppet Server (puppet apply or bolt apply), so pass `master`, \
      e.g. class { 'clone_army': master => 'puppet.example.com' }
      |- MSG
  }

  # Room for the OS and the host's own agent, and what one clone running the
  # agent daemon costs (DESIGN.md: about 58 MB agent + 9 MB booted systemd +
  # 3 MB nspawn, with headroom for agent runs).
  $memory_reserve_bytes = 2 * 1024 * 1024 * 1024
  $bytes_per_clone = 150 * 1024 * 1024
  $_num_clones = $num_clones ? {
    undef   => max(0, ($facts['memory']['system']['total_bytes'] - $memory_reserve_bytes) / $bytes_per_clone),
    default => $num_clones,
  }

  contain clone_army::install

  class { 'clone_army::fleet':
    master     => $_master,
    num_clones => $_num_clones,
  }
  contain clone_army::fleet

  Class['clone_army::install'] -> Class['clone_army::fleet']
}
