# @summary Installs the packages the helper runs on this host (`manage_packages`).
#
# @api private
#
# The list per OS family is `clone_army::host_packages`'s: `systemd-container`
# (`systemd-nspawn`, `machinectl`), and on Debian and Ubuntu `debootstrap`
# (which builds their bases), plus `curl` where the base's agent is
# downloaded on the host. On an OS family the helper builds no base for,
# nothing is installed and a warning says what to install. A package some
# other class has declared before this one is left to that declaration.
#
# @param puppet_source
#   Where the base's agent comes from (already resolved by the class).
#
class clone_army::packages (
  Clone_army::Puppet_source $puppet_source,
) {
  $family = $facts['os']['family']
  $packages = clone_army::host_packages($family, $puppet_source)
  if $packages =~ Undef {
    warning(@("MSG"/L))
      clone_army: manage_packages knows no packages for the OS family '${family}' (the helper \
      builds bases on Debian, RedHat and Suse); install systemd-nspawn and machinectl \
      (systemd-container) and what builds a base yourself, or set manage_packages => false
      |- MSG
  } else {
    # A package another class declared first (curl, often) is left to it
    # rather than declared twice, which would fail the catalog.
    $packages.each |String $package| {
      unless defined(Package[$package]) {
        package { $package:
          ensure => installed,
        }
      }
    }
  }
}
