# frozen_string_literal: true

require 'spec_helper'

describe 'clone_army::host_packages' do
  it { is_expected.to run.with_params('Debian', 'distro').and_return(['systemd-container', 'debootstrap']) }
  it { is_expected.to run.with_params('Debian', 'openvox').and_return(['systemd-container', 'debootstrap', 'curl']) }
  it { is_expected.to run.with_params('Debian', 'pe').and_return(['systemd-container', 'debootstrap', 'curl']) }
  it { is_expected.to run.with_params('RedHat', 'openvox').and_return(['systemd-container']) }
  it { is_expected.to run.with_params('RedHat', 'pe').and_return(['systemd-container']) }
  it { is_expected.to run.with_params('Suse', 'puppet').and_return(['systemd-container', 'curl']) }
  it { is_expected.to run.with_params('Gentoo', 'openvox').and_return(nil) }
  it { is_expected.to run.with_params('Debian', 'rpm').and_raise_error(ArgumentError, %r{puppet_source}) }
end
