# frozen_string_literal: true

require 'spec_helper'
require 'puppet_x/clone_army/agent_defaults'

describe PuppetX::CloneArmy::AgentDefaults do
  describe '.server' do
    def settings(server_list, server = 'puppet')
      { server_list: server_list, server: server }
    end

    it "is the agent's server when server_list is empty" do
      expect(described_class.server(settings([], 'puppet.example.com'))).to eq('puppet.example.com')
    end

    it 'is the first host of server_list when that is set (Puppet then ignores server)' do
      list = [['compile1.example.com', '8141'], ['compile2.example.com']]
      expect(described_class.server(settings(list, 'ignored.example.com'))).to eq('compile1.example.com')
    end

    it "reads Puppet's own settings by default" do
      Puppet[:server] = 'from-settings.example.com'
      Puppet[:server_list] = ''
      expect(described_class.server).to eq('from-settings.example.com')
      Puppet[:server_list] = 'listed.example.com:8140,other.example.com'
      expect(described_class.server).to eq('listed.example.com')
    end
  end

  describe '.server_port' do
    def settings(server_list, serverport = 8140)
      { server_list: server_list, server: 'puppet', serverport: serverport }
    end

    it "is nil for Puppet's default port, so that clones are told nothing" do
      expect(described_class.server_port(settings([]))).to be_nil
      expect(described_class.server_port(settings([['compile1.example.com', '8140']], 8141))).to be_nil
    end

    it "is the agent's serverport when server_list is empty" do
      expect(described_class.server_port(settings([], 8141))).to eq(8141)
    end

    it 'is the port of the first server_list entry, else serverport' do
      list = [['compile1.example.com', '8142'], ['compile2.example.com', '8143']]
      expect(described_class.server_port(settings(list, 8141))).to eq(8142)
      expect(described_class.server_port(settings([['compile1.example.com']], 8141))).to eq(8141)
    end

    it "reads Puppet's own settings by default" do
      Puppet[:server_list] = ''
      Puppet[:serverport] = 8141
      expect(described_class.server_port).to eq(8141)
      Puppet[:server_list] = 'listed.example.com:8144,other.example.com'
      expect(described_class.server_port).to eq(8144)
      Puppet[:server_list] = 'listed.example.com'
      Puppet[:serverport] = 8140
      expect(described_class.server_port).to be_nil
    end
  end

  describe '.certname' do
    it 'is the clone under the host' do
      expect(described_class.certname('clone1', 'loadhost.example.com')).to eq('clone1.loadhost.example.com')
    end
  end
end
