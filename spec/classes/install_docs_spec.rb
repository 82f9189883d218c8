# frozen_string_literal: true

require 'spec_helper'

# clone_army::install has the helper install its man page and shell
# completions (`clone-army host docs`), checked first with `--check`.
describe 'clone_army' do
  let(:node) { 'loadhost.example.com' }
  let(:facts) do
    {
      kernel: 'Linux',
      os: {
        'name' => 'Debian', 'family' => 'Debian',
        'release' => { 'major' => '12', 'full' => '12' },
        'distro' => { 'codename' => 'bookworm' }
      },
      networking: { 'fqdn' => 'loadhost.example.com', 'hostname' => 'loadhost', 'domain' => 'example.com' },
      memory: { 'system' => { 'total_bytes' => 24 * 1024 * 1024 * 1024 } },
    }
  end

  context 'with the default helper path' do
    let(:params) { { server: 'puppet.example.com', num_clones: 1 } }

    it { is_expected.to compile.with_all_deps }

    it 'installs the docs with the helper unless they are current, after the helper file' do
      is_expected.to contain_exec('clone_army::install docs').with(
        command: '/usr/local/sbin/clone-army host docs',
        unless: 'test -x /usr/local/sbin/clone-army && /usr/local/sbin/clone-army host docs --check',
        provider: 'shell',
      ).that_requires('File[/usr/local/sbin/clone-army]')
    end

    it 'declares it in clone_army::install' do
      expect(catalogue.resource('Exec', 'clone_army::install docs').tags).to include('clone_army::install')
    end
  end

  context 'with another helper path' do
    let(:params) { { server: 'puppet.example.com', num_clones: 1, helper_path: '/opt/clone-army/bin/clone-army' } }

    it 'runs that helper for the docs and their check' do
      is_expected.to contain_exec('clone_army::install docs').with(
        command: '/opt/clone-army/bin/clone-army host docs',
        unless: 'test -x /opt/clone-army/bin/clone-army && /opt/clone-army/bin/clone-army host docs --check',
      ).that_requires('File[/opt/clone-army/bin/clone-army]')
    end
  end

  # The commands go through the shell (`test -x` first: a --noop run before the
  # helper exists must not fail), so a helper path the shell would split is quoted.
  context 'with a helper path holding a space and a quote' do
    let(:params) { { server: 'puppet.example.com', num_clones: 1, helper_path: "/opt/clone army/it's/clone-army" } }

    it 'quotes it for the shell' do
      is_expected.to contain_exec('clone_army::install docs').with(
        command: %q("/opt/clone army/it's/clone-army" host docs),
        unless: %q(test -x "/opt/clone army/it's/clone-army" && "/opt/clone army/it's/clone-army" host docs --check),
      )
    end
  end
end
