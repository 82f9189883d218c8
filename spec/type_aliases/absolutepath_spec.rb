# frozen_string_literal: true

require 'spec_helper'

describe 'Clone_army::Absolutepath' do
  it { is_expected.to allow_values('/usr/local/sbin/clone-army', '/') }
  it { is_expected.not_to allow_values('clone-army', './clone-army', '', 'C:\\clone-army') }
end
