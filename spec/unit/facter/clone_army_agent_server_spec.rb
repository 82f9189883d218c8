# frozen_string_literal: true

require 'spec_helper'
require 'facter'

describe 'the clone_army_agent_server and clone_army_agent_server_port facts' do
  before(:each) do
    Facter.clear
    load File.expand_path('../../../lib/facter/clone_army_agent_server.rb', __dir__)
    load File.expand_path('../../../lib/facter/clone_army_agent_server_port.rb', __dir__)
  end

  after(:each) { Facter.clear }

  it 'is the name the agent reaches its server by' do
    Puppet[:server] = 'puppet'
    Puppet[:server_list] = ''
    expect(Facter.fact(:clone_army_agent_server).value).to eq('puppet')
  end

  it 'prefers the first host of server_list' do
    Puppet[:server_list] = 'compile1.example.com:8141'
    expect(Facter.fact(:clone_army_agent_server).value).to eq('compile1.example.com')
  end

  it 'has the port of that server beside it' do
    Puppet[:server_list] = 'compile1.example.com:8141'
    expect(Facter.fact(:clone_army_agent_server_port).value).to eq(8141)
  end

  it "has no port when it is Puppet's default" do
    Puppet[:server_list] = ''
    Puppet[:serverport] = 8140
    expect(Facter.fact(:clone_army_agent_server_port).value).to be_nil
  end
end
