# @summary Declares the base image and the clones `clone1` .. `cloneN`, and removes the surplus.
#
# @api private
#
# Surplus clones are those named `clone<N>` with N > num_clones that the
# `clone_army` fact lists; clones with any other name were made by hand and
# are left alone.
#
# @param server
#   The Puppet Server every clone points at (already resolved by the class);
#   undef only in apply mode.
# @param server_port
#   The port of that server (already resolved by the class); undef for
#   Puppet's default.
# @param num_clones
#   How many clones to declare (already resolved by the class).
# @param puppet_source
#   Where the base's agent comes from (already resolved by the class).
# @param pe_ca_cert
#   The CA certificate a `pe` base is installed against, else undef.
#
class clone_army::fleet (
  Optional[Clone_army::Hostname] $server,
  Integer[0] $num_clones,
  Clone_army::Puppet_source $puppet_source,
  Optional[Clone_army::Absolutepath] $pe_ca_cert = undef,
  Optional[Integer[1, 65535]] $server_port = undef,
) {
  $base = $clone_army::base
  $helper = $clone_army::helper_path

  # A PE base downloads its agent installer from the primary server, so it
  # is told which; other sources take no server.
  $base_server = $puppet_source ? {
    'pe'    => $server,
    default => undef,
  }

  clone_army_base { $base:
    ensure        => present,
    puppet_source => $puppet_source,
    server        => $base_server,
    pe_ca_cert    => $pe_ca_cert,
    helper        => $helper,
  }

  # A limit left undef is 'none' for the clones, so that a limit removed
  # from the class is removed from the clones as well.
  $memory_max = $clone_army::memory_max ? {
    undef   => 'none',
    default => $clone_army::memory_max,
  }
  $cpu_quota = $clone_army::cpu_quota ? {
    undef   => 'none',
    default => $clone_army::cpu_quota,
  }
  $tasks_max = $clone_army::tasks_max ? {
    undef   => 'none',
    default => $clone_army::tasks_max,
  }

  # Facts for a clone the class does not declare (a typo, or a clone beyond
  # num_clones) would be dropped without a word.
  $stray_facts = $clone_army::clone_facts.keys.filter |$name| {
    $number = $name.match(/\Aclone([1-9][0-9]{0,8})\z/)
    !($number =~ Array and Integer($number[1]) <= $num_clones)
  }
  unless $stray_facts.empty {
    warning(@("MSG"/L))
      clone_army: clone_facts names clones that are not among clone1 .. clone${num_clones} \
      and are ignored: ${stray_facts.sort.join(', ')}
      |- MSG
  }

  # Integer[1, N] iterates 1..N; with N = 0 there is nothing to iterate.
  $clones = $num_clones ? {
    0       => [],
    default => Integer[1, $num_clones].map |Integer $index| { "clone${index}" },
  }

  # Twins are dealt the nodes the fact lists as imported from the source
  # asked for; until then (the run that imports them) the fleet is left as
  # it is, so that no clone is made a plain clone only to be made a twin
  # at the next run.
  $twins = $clone_army::twins
  if $twins =~ NotUndef {
    $twin_source = $clone_army::twin_source
    clone_army_twins { 'clone_army':
      source      => $twin_source,
      ca_cert     => $twins['ca_cert'],
      client_cert => $twins['client_cert'],
      client_key  => $twins['client_key'],
      helper      => $helper,
    }
    $imported = $facts.dig('clone_army', 'twins')
    $twins_ready = $imported =~ Hash and $imported['imported_from'] == $twin_source
    if $twins_ready {
      $dealt = clone_army::twin_assignment(
        $imported['nodes'], $clones, $trusted['certname'], $facts['os']['family'], $twins,
      )
      unless $dealt['other_family'].empty {
        warning(@("MSG"/L))
          clone_army: ${dealt['other_family'].length} imported nodes are of another OS family \
          than the base's (${facts['os']['family']}) and get no twin, since their catalogs need \
          their own family's providers: ${dealt['other_family'].sort[0, 10].join(', ')}
          |- MSG
      }
      if $dealt['twins'].empty and !$clones.empty {
        fail(@("MSG"/L))
          clone_army: none of the ${imported['total']} imported nodes is of the base's OS \
          family (${facts['os']['family']}); twins of other families need a load host of theirs
          |- MSG
      }
    } else {
      warning(@("MSG"/L))
        clone_army: the twins' nodes are imported in this run; the clones become their \
        twins at the next run, and are left as they are until then
        |- MSG
    }
    $twin_of = $twins_ready ? {
      true    => $dealt['twins'],
      default => undef,
    }
  } else {
    $twin_of = {}
  }

  $declared = $twin_of ? {
    undef   => [],
    default => $clones,
  }
  $declared.each |Integer $position, String $clone| {
    $index = $position + 1
    $twin = $twin_of[$clone]
    $certname = $twin ? {
      undef   => clone_army::clone_certname($clone, $trusted['certname']),
      default => $twin['certname'],
    }
    $node = $twin ? {
      undef   => 'absent',
      default => $twin['node'],
    }
    $imports = $twin ? {
      undef   => [],
      default => [Clone_army_twins['clone_army']],
    }
    clone_army_clone { $clone:
      ensure             => $clone_army::clone_ensure,
      base               => $base,
      server             => $server,
      server_port        => $server_port,
      certname           => $certname,
      twin               => $node,
      require            => $imports,
      helper             => $helper,
      root_password_hash => $clone_army::root_password_hash,
      challenge_password => $clone_army::challenge_password,
      run_mode           => $clone_army::run_mode,
      apply_source       => $clone_army::apply_source,
      agent_noop         => $clone_army::agent_noop,
      runinterval        => $clone_army::runinterval,
      splay              => $clone_army::splay,
      # Clone i of N is phase i - 1 of N; the helper's phasing rule
      # turns that into the offset of its runs in each interval.
      phase_index        => $index - 1,
      phase_count        => $num_clones,
      phasing            => $clone_army::phasing,
      memory_max         => $memory_max,
      cpu_quota          => $cpu_quota,
      tasks_max          => $tasks_max,
      facts              => $clone_army::fleet_facts + $clone_army::clone_facts.get($clone, {}),
      generated_facts    => $clone_army::generated_facts,
      churn_percent      => $clone_army::churn_percent,
      ramp_up            => $clone_army::ramp_up,
    }
  }

  # Shrinking: what the fact lists beyond num_clones goes. Without a listing
  # (helper not yet installed, or failing) nothing is removed in this run.
  $listing_error = $facts.dig('clone_army', 'error')
  if $listing_error =~ String {
    warning(@("MSG"/L))
      clone_army: the clone_army fact could not list the clones (${listing_error}); \
      clones beyond num_clones are not removed in this run
      |- MSG
  }
  $listed = $twin_of ? {
    undef   => undef,
    default => $facts.dig('clone_army', 'clones', 'names'),
  }
  $surplus = ($listed ? { Array => $listed, default => [] }).filter |$name| {
    $number = $name.match(/\Aclone([1-9][0-9]{0,8})\z/)
    $number =~ Array and Integer($number[1]) > $num_clones
  }
  $surplus.each |String $clone| {
    clone_army_clone { $clone:
      ensure => absent,
      helper => $helper,
    }
  }

  # After every clone above (it requires them by itself): the removals,
  # restarts and starts they queued, one helper call each; a clone that
  # fails there fails this resource, and so the run.
  clone_army_fleet { 'clone_army': }
}
