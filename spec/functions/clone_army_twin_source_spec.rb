# frozen_string_literal: true

require 'spec_helper'

describe 'clone_army::twin_source' do
  it {
    is_expected.to run.with_params({ 'facts_dir' => '/srv/estate', 'exports' => 'isolated' },
                                   'puppet-test').and_return('facts_dir' => '/srv/estate')
  }

  it do
    is_expected.to run.with_params({ 'puppetdb' => 'https://db:8081', 'query' => 'q', 'exports' => 'shared' }, nil)
                      .and_return('puppetdb' => 'https://db:8081', 'query' => 'q')
  end

  it 'fails naming the class when no one source is given' do
    is_expected.to run.with_params({ 'exports' => 'shared' }, 'puppet-test')
                      .and_raise_error(Puppet::ParseError, %r{\Aclone_army: twins takes its nodes from `facts_dir`})
  end
end
