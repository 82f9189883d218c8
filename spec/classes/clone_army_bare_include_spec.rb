# frozen_string_literal: true

require 'spec_helper'

# `include clone_army` with no parameters, as the PE console classifies it:
# the clones point at the server this host's agent uses, and there are as
# many as the host holds, except on a host that is a Puppet Server itself.
describe 'clone_army' do
  let(:node) { 'loadhost.example.com' }
  let(:facts) do
    {
      kernel: 'Linux',
      processors: { 'count' => 2 },
      os: {
        'name' => 'Debian', 'family' => 'Debian', 'hardware' => 'x86_64', 'architecture' => 'amd64',
        'release' => { 'major' => '12', 'full' => '12.8' }, 'distro' => { 'codename' => 'bookworm' }
      },
      networking: { 'fqdn' => 'loadhost.example.com', 'hostname' => 'loadhost', 'domain' => 'example.com' },
      memory: { 'system' => { 'total_bytes' => 8 * 1024 * 1024 * 1024 } },
      clone_army_agent_server: 'puppet.example.com',
    }
  end

  around(:each) do |example|
    RSpec.configuration.trusted_server_facts = true
    example.run
  ensure
    RSpec.configuration.trusted_server_facts = false
  end

  context 'on a load host whose agent uses another server' do
    # 8 GiB, daemon mode: floor((8 GiB - 2 GiB) / 100 MiB) = 61 clones.
    it 'runs the host\'s capacity of clones against its agent\'s server' do
      is_expected.to contain_clone_army_clone('clone61').with_server('puppet.example.com')
      is_expected.not_to contain_clone_army_clone('clone62')
    end
  end

  context 'on a host that is the clones\' server itself' do
    let(:facts) { super().merge(clone_army_agent_server: 'loadhost.example.com') }

    it 'refuses to fill it, saying how to size the fleet' do
      is_expected.to compile.and_raise_error(
        %r{this host is a Puppet Server \(the clones' server, loadhost.example.com, is this host\).*61.*Give num_clones}m,
      )
    end

    context 'with num_clones' do
      let(:params) { { num_clones: 2 } }

      it { is_expected.to contain_clone_army_clone('clone2').with_server('loadhost.example.com') }
    end
  end

  context 'on PE infrastructure' do
    let(:facts) { super().merge(pe_server_version: '2023.8.0') }

    it { is_expected.to compile.and_raise_error(%r{it is PE infrastructure: pe_server_version is 2023.8.0.*Give num_clones}m) }

    context 'with num_clones' do
      let(:params) { { num_clones: 2 } }

      it { is_expected.to contain_clone_army_clone('clone2') }
    end
  end

  context 'on a host whose memory holds no clone' do
    let(:facts) do
      super().merge(clone_army_agent_server: 'loadhost.example.com', memory: { 'system' => { 'total_bytes' => 2 * 1024 * 1024 * 1024 } })
    end

    # A fleet of none takes nothing from the server.
    it { is_expected.to have_clone_army_clone_resource_count(0) }
  end
end
