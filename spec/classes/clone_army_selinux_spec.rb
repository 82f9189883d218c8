# frozen_string_literal: true

require 'spec_helper'

# clone_army::selinux: untested on this project's Debian machines (no SELinux),
# so these examples pin exactly what it runs and manages on a RHEL-family host.
describe 'clone_army' do
  let(:node) { 'loadhost.example.com' }
  let(:params) { { server: 'puppet.example.com', num_clones: 1 } }

  def with_selinux(os_facts, enabled:, enforced:)
    selinux = { 'enabled' => enabled, 'enforced' => enforced, 'current_mode' => enforced ? 'enforcing' : 'permissive' }
    os_facts.merge(os: os_facts[:os].merge('selinux' => selinux),
                   memory: { 'system' => { 'total_bytes' => 24 * 1024 * 1024 * 1024 } })
  end

  redhat_family = PlatformFacts.compiled_os.select { |_, f| f[:os]['family'] == 'RedHat' }

  it 'has RedHat-family facts to test with' do
    expect(redhat_family).not_to be_empty
  end

  redhat_family.each do |os, os_facts|
    context "on #{os} with SELinux enforcing" do
      let(:facts) { with_selinux(os_facts, enabled: true, enforced: true) }
      let(:helper) { '/usr/local/sbin/clone-army' }

      it { is_expected.to compile.with_all_deps }

      it 'declares clone_army::selinux after the helper and before the fleet' do
        is_expected.to contain_class('clone_army::selinux')
          .that_requires('Class[clone_army::install]')
          .that_comes_before('Class[clone_army::fleet]')
      end

      it 'installs container-selinux and semanage' do
        is_expected.to contain_package('container-selinux').with_ensure('installed')
        is_expected.to contain_package('policycoreutils-python-utils').with_ensure('installed')
      end

      it 'adds (or changes) the container_file_t rule for the state dir unless the policy has it' do
        is_expected.to contain_exec('clone_army::selinux fcontext').with(
          command: "semanage fcontext -a -t container_file_t '/var/lib/puppet-clone-army(/.*)?' || " \
                   "semanage fcontext -m -t container_file_t '/var/lib/puppet-clone-army(/.*)?'",
          unless: "matchpathcon -n /var/lib/puppet-clone-army | grep -q ':container_file_t:'",
          provider: 'shell',
        ).that_requires(['Package[container-selinux]', 'Package[policycoreutils-python-utils]'])
      end

      # Root's alone from its first mkdir (the helper keeps it so): never a
      # moment at 0755 in which a local user could open a directory in it.
      it 'relabels the state dir only when restorecon would change something, making it 0700 if missing' do
        is_expected.to contain_exec('clone_army::selinux restorecon').with(
          command: 'mkdir -p -m 0700 /var/lib/puppet-clone-army && restorecon -R /var/lib/puppet-clone-army',
          onlyif: 'test ! -d /var/lib/puppet-clone-army || restorecon -R -n -v /var/lib/puppet-clone-army | grep -q .',
          provider: 'shell',
        ).that_requires('Exec[clone_army::selinux fcontext]')
      end

      it 'turns container_manage_cgroup on persistently, once' do
        is_expected.to contain_selboolean('container_manage_cgroup').with(
          value: 'on',
          persistent: true,
        ).that_requires('Package[container-selinux]')
        is_expected.not_to contain_exec('clone_army::selinux container_manage_cgroup')
      end

      it "has the helper write the template drop-in with container-selinux's labels unless --check passes" do
        flags = '--context system_u:system_r:container_t:s0 --apifs-context system_u:object_r:container_file_t:s0'
        is_expected.to contain_exec('clone_army::selinux nspawn labels').with(
          command: "#{helper} host selinux #{flags}",
          unless: "#{helper} host selinux #{flags} --check",
          provider: 'shell',
        )
      end

      it 'keeps systemd-machined running' do
        is_expected.to contain_service('systemd-machined')
          .with_ensure('running')
          .that_requires(['Exec[clone_army::selinux restorecon]', 'Selboolean[container_manage_cgroup]'])
      end

      context 'and another helper_path' do
        let(:params) { super().merge(helper_path: '/opt/clone-army/bin/clone-army') }

        it 'runs that helper' do
          is_expected.to contain_exec('clone_army::selinux nspawn labels')
            .with_command(%r{\A/opt/clone-army/bin/clone-army host selinux })
        end
      end

      # A path with a space (or a quote, or a `;`) is one word for the shell,
      # never two commands, as in clone_army::install.
      context 'and a helper_path a shell would split' do
        let(:params) { super().merge(helper_path: "/opt/clone army/it's;x/clone-army") }

        it 'quotes it in the command and in its check' do
          flags = '--context system_u:system_r:container_t:s0 --apifs-context system_u:object_r:container_file_t:s0'
          is_expected.to contain_exec('clone_army::selinux nspawn labels').with(
            command: %("/opt/clone army/it's;x/clone-army" host selinux #{flags}),
            unless: %("/opt/clone army/it's;x/clone-army" host selinux #{flags} --check),
            provider: 'shell',
          )
        end
      end
    end

    context "on #{os} with SELinux permissive" do
      let(:facts) { with_selinux(os_facts, enabled: true, enforced: false) }

      it { is_expected.to compile.with_all_deps }
      it { is_expected.not_to contain_class('clone_army::selinux') }
      it { is_expected.not_to contain_package('container-selinux') }
    end

    context "on #{os} with SELinux disabled" do
      let(:facts) { with_selinux(os_facts, enabled: false, enforced: false) }

      it { is_expected.not_to contain_class('clone_army::selinux') }
    end
  end

  context 'on Debian 12 even with an enforcing SELinux' do
    let(:facts) do
      with_selinux({ kernel: 'Linux',
                     os: { 'name' => 'Debian', 'family' => 'Debian', 'release' => { 'major' => '12', 'full' => '12' } },
                     networking: { 'fqdn' => 'loadhost.example.com' } },
                   enabled: true, enforced: true)
    end

    it { is_expected.not_to contain_class('clone_army::selinux') }
  end
end

describe 'clone_army::selinux' do
  let(:node) { 'loadhost.example.com' }
  let(:facts) do
    { kernel: 'Linux',
      os: { 'name' => 'Rocky', 'family' => 'RedHat', 'release' => { 'major' => '9', 'full' => '9.4' },
            'selinux' => { 'enabled' => false, 'enforced' => false } },
      networking: { 'fqdn' => 'loadhost.example.com' },
      memory: { 'system' => { 'total_bytes' => 24 * 1024 * 1024 * 1024 } } }
  end
  let(:pre_condition) { "class { 'clone_army': server => 'puppet.example.com', num_clones => 0 }" }

  context 'with contexts of its own (Hiera: clone_army::selinux::context)' do
    let(:params) do
      { context: 'system_u:system_r:container_t:s0:c100,c200', apifs_context: 'system_u:object_r:container_file_t:s0:c100,c200' }
    end

    it 'hands them to the helper' do
      flags = '--context system_u:system_r:container_t:s0:c100,c200 ' \
              '--apifs-context system_u:object_r:container_file_t:s0:c100,c200'
      is_expected.to contain_exec('clone_army::selinux nspawn labels').with(
        command: "/usr/local/sbin/clone-army host selinux #{flags}",
        unless: "/usr/local/sbin/clone-army host selinux #{flags} --check",
      )
    end
  end

  ['container_t', 'system_u:system_r:container_t:s0 --bind=/', "system_u:system_r:container_t:s0'; rm -rf /"].each do |bad|
    context "with context #{bad.inspect}" do
      let(:params) { { context: bad } }

      it { is_expected.to compile.and_raise_error(%r{parameter 'context' expects a match for Clone_army::Selinux_context}) }
    end
  end
end
