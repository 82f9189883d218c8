# frozen_string_literal: true

require 'spec_helper'

# manage_packages: what the helper runs on the host is installed before the
# helper, and so before the base is built and the clones run.
describe 'clone_army' do
  let(:node) { 'loadhost.example.com' }
  let(:params) { { server: 'puppet.example.com', num_clones: 1 } }

  def with_memory(os_facts)
    os_facts.merge(memory: { 'system' => { 'total_bytes' => 24 * 1024 * 1024 * 1024 } })
  end

  family_facts = lambda do |family|
    PlatformFacts.compiled_os.select { |_, f| f[:os]['family'] == family }.tap do |found|
      raise "facterdb has no #{family}-family facts to test with" if found.empty?
    end
  end

  family_facts.call('Debian').each do |os, os_facts|
    context "on #{os}" do
      let(:facts) { with_memory(os_facts) }

      it { is_expected.to compile.with_all_deps }

      it 'installs systemd-container and debootstrap before the helper' do
        ['systemd-container', 'debootstrap'].each do |package|
          is_expected.to contain_package(package).with_ensure('installed')
        end
        is_expected.to contain_class('clone_army::packages').that_comes_before('Class[clone_army::install]')
      end

      it 'has them in place before the base is built' do
        base = "#{os_facts[:os]['name']}-#{os_facts[:os]['release']['major']}".downcase.gsub(%r{[^a-z0-9-]}, '-')
        is_expected.to contain_package('debootstrap').that_comes_before("Clone_army_base[#{base}]")
        is_expected.to contain_package('systemd-container').that_comes_before('Clone_army_clone[clone1]')
      end

      it 'leaves curl alone for the distribution\'s agent, which debootstrap installs' do
        is_expected.not_to contain_package('curl')
      end

      context 'with an agent the helper downloads on the host' do
        let(:params) { super().merge(puppet_source: 'openvox') }

        it { is_expected.to contain_package('curl').with_ensure('installed') }

        context 'and curl declared by another class first' do
          let(:pre_condition) { "package { 'curl': ensure => latest }" }

          it 'leaves it to that declaration' do
            is_expected.to compile.with_all_deps
            is_expected.to contain_package('curl').with_ensure('latest')
          end
        end
      end

      context 'with manage_packages => false' do
        let(:params) { super().merge(manage_packages: false) }

        it { is_expected.to compile.with_all_deps }
        it { is_expected.not_to contain_class('clone_army::packages') }
        it { is_expected.to have_package_resource_count(0) }
      end
    end
  end

  family_facts.call('RedHat').each do |os, os_facts|
    context "on #{os}" do
      let(:facts) { with_memory(os_facts) }

      it { is_expected.to compile.with_all_deps }

      it 'installs systemd-container before the helper, and no debootstrap' do
        is_expected.to contain_package('systemd-container').with_ensure('installed')
        is_expected.to contain_package('systemd-container').that_comes_before('Class[clone_army::install]')
        is_expected.not_to contain_package('debootstrap')
      end

      # EL 9's curl-minimal conflicts with a curl package.
      context 'with a PE agent' do
        let(:params) { super().merge(puppet_source: 'pe') }

        it { is_expected.not_to contain_package('curl') }
      end

      context 'with manage_packages => false' do
        let(:params) { super().merge(manage_packages: false) }

        it { is_expected.to compile.with_all_deps }
        it { is_expected.not_to contain_package('systemd-container') }
      end
    end
  end

  context 'on an OS family the helper builds no base for' do
    let(:facts) do
      debian = PlatformFacts.compiled_os.fetch('debian-13-x86_64')
      with_memory(debian.merge(os: debian[:os].merge('family' => 'Gentoo')))
    end

    it 'installs nothing and says what to install' do
      logs = []
      collector = Puppet::Test::LogCollector.new(logs)
      Puppet::Util::Log.newdestination(collector)
      begin
        is_expected.to have_package_resource_count(0)
      ensure
        Puppet::Util::Log.close(collector)
      end
      expect(logs.map(&:message).join("\n")).to match(%r{no packages for the OS family 'Gentoo'.*manage_packages => false}m)
    end
  end
end
