# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/host_packages'

# @summary The packages a load host needs for the helper to run clones and build their base.
#
# Per OS family (Facter's `os.family`): `systemd-container` everywhere; on
# Debian and Ubuntu also `debootstrap`, and `curl` when the base's agent is
# downloaded on the host (`puppet`, `openvox`, `pe`); on SUSE `curl` for
# those too. The list and why each package is on it:
# `PuppetX::CloneArmy::HostPackages` (and the class parameter
# `manage_packages`). Class `clone_army` installs them with
# `manage_packages`; with `manage_packages => false` a profile of your own can
# declare the same list.
Puppet::Functions.create_function(:'clone_army::host_packages') do
  # @param os_family
  #   The host's OS family, `$facts['os']['family']`.
  # @param puppet_source
  #   Where the base's agent comes from (the class's resolved `puppet_source`).
  # @return [Optional[Array[String]]]
  #   The packages, or `undef` for an OS family the helper builds no base for.
  # @example
  #   clone_army::host_packages('Debian', 'openvox')  # ['systemd-container', 'debootstrap', 'curl']
  # @example In a profile of your own, with manage_packages => false
  #   package { clone_army::host_packages($facts['os']['family'], 'openvox'):
  #     ensure => installed,
  #   }
  dispatch :host_packages do
    param 'String[1]', :os_family
    param 'Clone_army::Puppet_source', :puppet_source
    return_type 'Optional[Array[String[1]]]'
  end

  def host_packages(os_family, puppet_source)
    PuppetX::CloneArmy::HostPackages.for(os_family, puppet_source)
  end
end
