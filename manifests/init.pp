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
#   How many clones (`clone1` .. `cloneN`) to run. 0 is a valid count (a
#   fleet of none). When undef, it is this host's capacity for clones running
#   the agent as a daemon: the `clone_army` fact's `capacity.daemon`,
#   `max(0, floor((total memory - 2 GiB) / 100 MiB))` (2 GiB are left to the
#   OS and the host's own agent; 100 MiB is what one daemon-mode clone is
#   given: about 70 MB measured, plus headroom for agent runs). A 24 GiB host
#   gets 225 clones; a host with 2 GiB or less gets none. Without the fact (a
#   host that has not synced this module's plugins yet), the same formula is
#   computed from `$facts['memory']['system']['total_bytes']`.
#
#   A count beyond the capacity fails the catalog unless `force_num_clones`
#   is true. Lowering the count removes the surplus clones completely: every
#   clone named `clone<N>` with N > num_clones that the `clone_army` fact
#   lists is declared `ensure => absent` (stopped, unmounted, its units and
#   directories removed). Clones with other names (made by hand, e.g.
#   `puppet resource clone_army_clone test1 ...`) are left alone.
#
# @param force_num_clones
#   Run `num_clones` clones even when that is more than the host's capacity
#   (see `num_clones`). Clones that do not fit in memory make the host swap
#   or the kernel's OOM killer end agent runs, which distorts the load.
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
#   clone on the new base (each clone is removed, upper layer included, and
#   created again), so anything written inside the clones is lost.
#
# @param puppet_source
#   Where the Puppet agent in the base comes from: `distro` (the
#   distribution's `puppet-agent` package), `puppet` or `openvox` (their
#   official repositories) or `pe` (Puppet Enterprise, from the primary
#   server's `/packages/current/`, verified against `pe_ca_cert`). When
#   undef: `pe` when the server is PE (`$server_facts['pe_serverversion']`
#   is set, or the host has PE's `pe_server_version` fact), else `distro`.
#   Under `bolt apply` or `puppet apply` on a plain agent there are no server
#   facts, so give `pe` explicitly there. Used only when the base is built:
#   changing it does not rebuild an existing base (see `clone_army_base`).
#
# @param pe_ca_cert
#   With `puppet_source => 'pe'`: the host's copy of the PE CA certificate,
#   which the helper verifies the primary server against when it downloads
#   the agent installer (it never skips verification). Defaults to the host
#   agent's `/etc/puppetlabs/puppet/ssl/certs/ca.pem`. Refused with another
#   `puppet_source`.
#
# @param root_password_hash
#   The crypt(3) hash of the clones' root password (`mkpasswd -m yescrypt`,
#   `openssl passwd -6`), so that `machinectl login <clone>` works. Without
#   it root has no password in the clones and only `machinectl shell` gets
#   in. `Sensitive`: never shown in logs, reports or diffs, and handed to the
#   helper in a file of mode 0600, never on a command line. Set when a clone
#   is created: changing it does not change the password of existing clones.
#
# @param challenge_password
#   A challenge password every clone puts into its certificate request
#   (`challengePassword` in its `csr_attributes.yaml`), for a Puppet Server
#   that signs by policy (`autosign` pointing at a policy executable that
#   checks the password): the secure alternative to `*` in `autosign.conf`.
#   `Sensitive`, like `root_password_hash`, and set when a clone is created.
#
# @param helper_path
#   Where the `clone-army` helper binary is installed. The types' providers
#   run it from there. The `clone_army` fact looks for it only at the default
#   path and on the PATH: elsewhere, the fact lists no clones and shrinking
#   `num_clones` removes nothing.
#
class clone_army (
  Optional[Clone_army::Hostname] $master = undef,
  Optional[Integer[0]] $num_clones = undef,
  Boolean $force_num_clones = false,
  Clone_army::Clone_ensure $clone_ensure = 'present',
  Clone_army::Name $base = regsubst(downcase("${facts['os']['name']}-${facts['os']['release']['major']}"), '[^a-z0-9-]', '-', 'G'),
  Clone_army::Absolutepath $helper_path = '/usr/local/sbin/clone-army',
  Optional[Clone_army::Puppet_source] $puppet_source = undef,
  Optional[Clone_army::Absolutepath] $pe_ca_cert = undef,
  Optional[Sensitive[String]] $root_password_hash = undef,
  Optional[Sensitive[String[1]]] $challenge_password = undef,
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

  # PE's servers add pe_serverversion to the server facts; PE infrastructure
  # nodes also have the pe_server_version fact (Bolt, puppet apply).
  $server_is_pe = getvar('server_facts.pe_serverversion') =~ NotUndef or $facts['pe_server_version'] =~ NotUndef
  $_puppet_source = $puppet_source ? {
    undef   => $server_is_pe ? {
      true    => 'pe',
      default => 'distro',
    },
    default => $puppet_source,
  }
  if $pe_ca_cert =~ NotUndef and $_puppet_source != 'pe' {
    fail(@("MSG"/L))
      clone_army: pe_ca_cert is only used with puppet_source => 'pe'; \
      puppet_source is '${_puppet_source}'
      |- MSG
  }
  $_pe_ca_cert = $_puppet_source ? {
    'pe'    => $pe_ca_cert ? {
      undef   => '/etc/puppetlabs/puppet/ssl/certs/ca.pem',
      default => $pe_ca_cert,
    },
    default => undef,
  }

  # The value is never put into the message.
  if $root_password_hash =~ NotUndef and $root_password_hash.unwrap !~ Clone_army::Crypt_hash {
    # A literal heredoc (no interpolation), so '$6$' stays as written.
    fail(@(MSG/L))
      clone_army: root_password_hash must be a crypt(3) password hash such as \
      '$6$<salt>$<hash>' or '$y$<params>$<salt>$<hash>' (make one with \
      `mkpasswd -m yescrypt` or `openssl passwd -6`); the value given is not one (not shown)
      |- MSG
  }

  # What this host's memory holds in daemon mode: the fact when the host has
  # it, else the same formula here (lib/puppet_x/clone_army/capacity.rb).
  $fact_capacity = $facts.dig('clone_army', 'capacity', 'daemon')
  $capacity = $fact_capacity ? {
    Integer => $fact_capacity,
    default => clone_army::capacity($facts['memory']['system']['total_bytes'], 'daemon'),
  }

  $_num_clones = $num_clones ? {
    undef   => $capacity,
    default => $num_clones,
  }
  if $_num_clones > $capacity and !$force_num_clones {
    fail(@("MSG"/L))
      clone_army: num_clones => ${_num_clones} is more than this host's memory holds: \
      its capacity is ${capacity} clones (total memory minus 2 GiB, divided by 100 MiB \
      per clone running the agent as a daemon). Lower num_clones, or set \
      force_num_clones => true to run ${_num_clones} clones anyway.
      |- MSG
  }

  contain clone_army::install

  class { 'clone_army::fleet':
    master        => $_master,
    num_clones    => $_num_clones,
    puppet_source => $_puppet_source,
    pe_ca_cert    => $_pe_ca_cert,
  }
  contain clone_army::fleet

  Class['clone_army::install'] -> Class['clone_army::fleet']
}
