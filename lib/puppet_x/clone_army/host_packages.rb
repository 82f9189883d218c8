# frozen_string_literal: true

module PuppetX
  module CloneArmy
    # The packages a load host needs for the helper to run clones and build
    # their base, per OS family (Facter's `os.family`): the one list of them,
    # which class clone_army installs with `manage_packages`. Read from what
    # the helper runs on the host (helper/src/base/builder, the clones' units):
    #
    # - every family: `systemd-container`, for `systemd-nspawn` (the clones,
    #   and the commands run inside a base being built) and `machinectl`;
    # - Debian and Ubuntu: `debootstrap`, which builds their bases, and `curl`
    #   when the base's agent is not the distribution's: the helper downloads
    #   the vendor's release package, or PE's installer, with it on the host.
    #   A minimal Debian or Ubuntu has no curl; the archive keyring that
    #   debootstrap verifies with comes with apt, which depends on it.
    # - RHEL family: bases are built with the host's own `dnf` (which fetches
    #   the vendor's release package itself), and its minimal install has curl
    #   for PE's installer (as `curl-minimal` on EL 9, which a `curl` package
    #   would conflict with), so nothing more.
    # - SUSE: bases are built with the host's own `zypper` and `rpm`; the
    #   vendor's release package and PE's installer are downloaded with `curl`.
    module HostPackages
      PACKAGES = {
        'Debian' => { always: ['systemd-container', 'debootstrap'].freeze, download: ['curl'].freeze }.freeze,
        'RedHat' => { always: ['systemd-container'].freeze, download: [].freeze }.freeze,
        'Suse' => { always: ['systemd-container'].freeze, download: ['curl'].freeze }.freeze,
      }.freeze
      # The agent sources whose packages the helper downloads on the host.
      DOWNLOADED_SOURCES = ['puppet', 'openvox', 'pe'].freeze

      # The packages of a host of `os_family` whose base's agent comes from
      # `puppet_source`; nil for a family the helper builds no base for.
      def self.for(os_family, puppet_source)
        packages = PACKAGES[os_family]
        return nil unless packages

        packages[:always] + (DOWNLOADED_SOURCES.include?(puppet_source) ? packages[:download] : [])
      end
    end
  end
end
