# @summary What `systemd-nspawn` clones need on a RHEL-family host with SELinux enforcing.
#
# Class `clone_army` contains this class, between installing the helper and
# building the fleet, when the host's facts say `os.family` is `RedHat` and
# `os.selinux.enforced` is true; elsewhere it is not declared. Set its
# parameters in Hiera.
#
# It makes sure that:
#
# * `container-selinux` (the `container_t` domain and `container_file_t`
#   type made for containers) and `policycoreutils-python-utils`
#   (`semanage`) are installed;
# * `/var/lib/puppet-clone-army` and everything below it (bases, the clones'
#   upper and work directories) has the file type `container_file_t`: a
#   `semanage fcontext -a -t container_file_t '/var/lib/puppet-clone-army(/.*)?'`
#   rule (or `-m` when a rule names another type) unless `matchpathcon`
#   already says so, so the label survives a relabel of the whole file
#   system, then `restorecon -R /var/lib/puppet-clone-army` whenever
#   `restorecon -R -n -v` would relabel anything (a base built since, files
#   created by hand);
# * the boolean `container_manage_cgroup` is on (persistently), which a
#   systemd running as PID 1 in `container_t` needs for its cgroups;
# * every clone's `systemd-nspawn` runs the container with `context` and
#   mounts its API file systems with `apifs_context`
#   (`--selinux-context=<context> --selinux-apifs-context=<apifs_context>`):
#   `clone-army host selinux --context <context> --apifs-context
#   <apifs_context>`, unless the same with `--check` passes. The helper
#   writes the clone template's drop-in
#   `/etc/systemd/system/puppet-clone-army@.service.d/60-selinux.conf`, which
#   sets `CLONE_ARMY_NSPAWN_SELINUX`, the variable the template's
#   `ExecStart=` ends in (see `docs/PROTOCOL.md`);
# * `systemd-machined` runs, for the clones' registration and
#   `machinectl list|status|shell`.
#
# The boolean is a `selboolean`: since Puppet 6 the type is not in Puppet's
# own library but in the `selinux_core` module, which the agent packages of
# Puppet 7 and 8 and OpenVox ship among their vendored modules (Debian 12's
# puppet-agent leaves it to `puppet-module-puppetlabs-selinux-core`), so the
# server that compiles the catalog has it without a dependency. The file
# contexts go through `exec` with `unless`/`onlyif` checks rather than the
# `selinux` module's types: this module depends on no other module.
#
# Running clones get the new labels at their next start. When SELinux is
# switched off later, the class no longer manages any of this and the
# drop-in stays: remove it (`rm
# /etc/systemd/system/puppet-clone-army@.service.d/60-selinux.conf &&
# systemctl daemon-reload`), since nspawn cannot set labels without SELinux.
#
# Untested on this project's machines: they have no SELinux (no `selinuxfs`
# in `/proc/filesystems`, no `/sys/fs/selinux`). The rspec-puppet examples
# in `spec/classes/clone_army_selinux_spec.rb` pin every command, and the
# helper's unit tests its drop-in.
#
# @example Hiera: the clones in an MCS category of their own
#   clone_army::selinux::context: 'system_u:system_r:container_t:s0:c100,c200'
#   clone_army::selinux::apifs_context: 'system_u:object_r:container_file_t:s0:c100,c200'
#
# @param context
#   The SELinux context of the clones' processes (`systemd-nspawn
#   --selinux-context`).
#
#   Example: `context => 'system_u:system_r:container_t:s0:c100,c200'`
#   (in Hiera, `clone_army::selinux::context`)
#
# @param apifs_context
#   The SELinux context of the API file systems `systemd-nspawn` mounts in
#   each clone (`/proc`, `/sys`, `/dev`, `/run`; `--selinux-apifs-context`).
#
#   Example: `apifs_context => 'system_u:object_r:container_file_t:s0:c100,c200'`
#   (in Hiera, `clone_army::selinux::apifs_context`)
#
class clone_army::selinux (
  Clone_army::Selinux_context $context = 'system_u:system_r:container_t:s0',
  Clone_army::Selinux_context $apifs_context = 'system_u:object_r:container_file_t:s0',
) {
  # One word for the shell whatever the path holds, as in clone_army::install.
  $helper = shellquote($clone_army::helper_path)
  $state_dir = '/var/lib/puppet-clone-army'
  $path = ['/usr/sbin', '/usr/bin', '/sbin', '/bin']
  # The rule's path, quoted for the shell: the directory and everything below.
  $fcontext_spec = "'${state_dir}(/.*)?'"

  package { ['container-selinux', 'policycoreutils-python-utils']:
    ensure => installed,
  }

  # -a adds the rule; -m changes one that names another type.
  exec { 'clone_army::selinux fcontext':
    command  => "semanage fcontext -a -t container_file_t ${fcontext_spec} || semanage fcontext -m -t container_file_t ${fcontext_spec}",
    unless   => "matchpathcon -n ${state_dir} | grep -q ':container_file_t:'",
    provider => shell,
    path     => $path,
    require  => Package['container-selinux', 'policycoreutils-python-utils'],
  }

  # restorecon -n -v prints what it would relabel: nothing when all is right.
  # The state directory is root's alone from its first mkdir, as the helper
  # makes it.
  exec { 'clone_army::selinux restorecon':
    command  => "mkdir -p -m 0700 ${state_dir} && restorecon -R ${state_dir}",
    onlyif   => "test ! -d ${state_dir} || restorecon -R -n -v ${state_dir} | grep -q .",
    provider => shell,
    path     => $path,
    require  => Exec['clone_army::selinux fcontext'],
  }

  # container-selinux defines the boolean.
  selboolean { 'container_manage_cgroup':
    value      => on,
    persistent => true,
    require    => Package['container-selinux'],
  }

  # The contexts are Clone_army::Selinux_context: no spaces or shell characters.
  exec { 'clone_army::selinux nspawn labels':
    command  => "${helper} host selinux --context ${context} --apifs-context ${apifs_context}",
    unless   => "${helper} host selinux --context ${context} --apifs-context ${apifs_context} --check",
    provider => shell,
    path     => $path,
    require  => Package['container-selinux'],
  }

  service { 'systemd-machined':
    ensure  => running,
    require => [Exec['clone_army::selinux restorecon'], Selboolean['container_manage_cgroup']],
  }
}
