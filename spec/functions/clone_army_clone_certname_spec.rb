# frozen_string_literal: true

require 'spec_helper'

describe 'clone_army::clone_certname' do
  it { is_expected.to run.with_params('clone1', 'loadhost.example.com').and_return('clone1.loadhost.example.com') }
  it { is_expected.to run.with_params('', 'loadhost.example.com').and_raise_error(ArgumentError, %r{clone}) }
end
