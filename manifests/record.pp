# @summary Runs `clone-army record` as a service of its own, or removes that service.
#
# @api private
#
# The service `puppet-clone-army-record` samples the fleet, the server (and
# PuppetDB when given) and this host every `record_every` seconds into
# `record_file`, which the helper rotates by size. It is enabled, so it
# starts again after a reboot; it restarts after a crash, and when a new
# helper is installed (it subscribes to the helper's file), appending to the
# same timeline. With `record => false` the service is stopped and its unit
# removed; the timeline stays.
#
# Either way the class names the timeline's directory in
# `/etc/puppet-clone-army/record_dir` (root's, 0644 in a 0755 directory):
# the `clone_army::report` task, which runs as root, reads timelines and
# writes pages only there, so someone allowed only that task cannot choose
# where root reads or writes.
#
# @param server
#   The Puppet Server the recorder asks for its view (the clones' server),
#   or undef for none (apply mode).
# @param server_port
#   The port of that server, or undef for Puppet's default.
#
class clone_army::record (
  Optional[Clone_army::Hostname] $server,
  Optional[Integer[1, 65535]] $server_port = undef,
) {
  $unit = 'puppet-clone-army-record.service'
  $unit_file = "/etc/systemd/system/${unit}"
  $service = $unit.regsubst('\.service\z', '')
  $helper = $clone_army::helper_path
  $timeline = $clone_army::record_file
  # Clone_army::Timeline_path has at least two parts, so this is never `/`.
  $timeline_dir = $timeline.regsubst('/[^/]+\z', '')

  file { '/etc/puppet-clone-army':
    ensure => directory,
    owner  => 'root',
    group  => 'root',
    mode   => '0755',
  }
  file { '/etc/puppet-clone-army/record_dir':
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => @("RECORD_DIR"),
      # Managed by Puppet (class clone_army). The recorder's directory: the
      # clone_army::report task reads timelines and writes pages only here.
      ${timeline_dir}
      | RECORD_DIR
  }

  if $clone_army::record {
    $every = $clone_army::record_every ? {
      undef   => [],
      default => ['--every', String($clone_army::record_every)],
    }
    $asked_server = $server ? {
      undef   => [],
      default => $server_port ? {
        undef   => ['--server', $server],
        default => ['--server', "${server}:${server_port}"],
      },
    }
    $asked_puppetdb = $clone_army::record_puppetdb ? {
      undef   => [],
      default => ['--puppetdb', $clone_army::record_puppetdb],
    }
    $access_log = $clone_army::record_access_log ? {
      undef   => [],
      default => ['--access-log', $clone_army::record_access_log],
    }
    $group_by = $clone_army::record_group_by ? {
      undef   => [],
      default => ['--group-by', $clone_army::record_group_by],
    }
    $argv = [$helper, 'record', '--output', $timeline, '--interval', String($clone_army::runinterval)] +
      $every + $asked_server + $asked_puppetdb + $access_log + $group_by

    # Made when missing; an existing directory (`/var/log` itself, say) keeps
    # its owner and mode.
    file { $timeline_dir:
      ensure => directory,
    }
    file { $unit_file:
      ensure  => file,
      owner   => 'root',
      group   => 'root',
      mode    => '0644',
      content => epp('clone_army/record.service.epp', {
          'exec_start'   => clone_army::unit_command($argv),
          'timeline'     => $timeline,
          'timeline_dir' => $timeline_dir,
      }),
    }
    # Puppet's systemd provider reloads systemd when the unit file changed.
    service { $service:
      ensure    => running,
      enable    => true,
      subscribe => [File[$unit_file], File[$timeline_dir], File[$helper]],
    }
  } else {
    service { $service:
      ensure => stopped,
      enable => false,
    }
    -> file { $unit_file:
      ensure => absent,
    }
  }
}
