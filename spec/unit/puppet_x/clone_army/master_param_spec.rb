# frozen_string_literal: true

require 'spec_helper'
require 'puppet_x/clone_army/master_param'

# `master`, the word before `server`, on both types that take a server.
describe PuppetX::CloneArmy::MasterParam do
  let(:catalog) { Puppet::Resource::Catalog.new }

  {
    clone_army_clone: { name: 'clone1' },
    clone_army_base: { name: 'debian-12', puppet_source: 'pe', pe_ca_cert: '/etc/pe-ca.pem' },
  }.each do |type, required|
    context "on #{type}" do
      def logs_of
        logs = []
        collector = Puppet::Test::LogCollector.new(logs)
        Puppet::Util::Log.newdestination(collector)
        result = yield
        [result, logs.map(&:message)]
      ensure
        Puppet::Util::Log.close(collector)
      end

      let(:make) do
        ->(attributes) { Puppet::Type.type(type).new(required.merge(catalog: catalog).merge(attributes)) }
      end

      it 'is taken as server, with a warning' do
        resource, messages = logs_of { make.call(master: 'old.example.com') }
        expect(resource[:server]).to eq('old.example.com')
        expect(messages).to include('master is deprecated, give server instead (the same value)')
      end

      it 'says nothing when only server is given' do
        resource, messages = logs_of { make.call(server: 'new.example.com') }
        expect(resource[:server]).to eq('new.example.com')
        expect(messages.grep(%r{deprecated})).to be_empty
      end

      it 'is refused beside a server that differs, naming both' do
        expect { make.call(master: 'old.example.com', server: 'new.example.com') }.to raise_error(
          Puppet::ResourceError, %r{server => 'new.example.com' and master => 'old.example.com' disagree}
        )
      end

      it 'is checked as a host name, under its own name' do
        expect { make.call(master: 'not a host') }.to raise_error(Puppet::ResourceError, %r{master must be})
      end
    end
  end
end
